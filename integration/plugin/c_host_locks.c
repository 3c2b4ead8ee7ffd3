// SPDX-License-Identifier: Apache-2.0
/* integration/plugin/c_host_locks.c
 *
 * The lock exercises of the C host (c_host.c): locks (1.2: re-entry, fenced writes), fair locks
 * (1.3) and semaphores (1.4: two threads' permits), through the C table alone. */
#ifdef __cplusplus
#error "c_host_locks.c proves the ABI is C: compile it as C"
#endif

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "integration/plugin/c_host.h"
#include "plugin/registry_plugin.h"

void ExerciseLock(struct RegistryRepository* repo) {
  struct RegistryError error = {0, NULL};
  struct RegistryLock* lock = NULL;
  bool flag = false;
  EXPECT_CODE(g_api.get_lock(repo, "c_host/job", &lock, &error), REGISTRY_OK);
  if (lock == NULL) return;
  EXPECT_CODE(g_api.persist_if_held(lock, "/fenced", "x", 1, &error), REGISTRY_FAILED_PRECONDITION);
  EXPECT_CODE(g_api.try_lock(lock, 1000, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.lock(lock, &error), REGISTRY_OK); /* re-entry: no request, counted */
  EXPECT_CODE(g_api.lock_is_held(lock, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.lock_is_lost(lock, &flag, &error), REGISTRY_OK);
  CHECK(!flag);
  EXPECT_CODE(g_api.persist_if_held(lock, "/fenced", "under lock", 10, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.unlock(lock, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.lock_is_held(lock, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.unlock(lock, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.lock_is_held(lock, &flag, &error), REGISTRY_OK);
  CHECK(!flag);
  EXPECT_CODE(g_api.unlock(lock, &error), REGISTRY_FAILED_PRECONDITION);
  g_api.release_lock(lock);
}

/* The fair lock: a handle of its own, used with the lock entries; a different lock from the mutex
 * of the same name, so both can be held at once. */
void ExerciseFairLock(struct RegistryRepository* repo) {
  struct RegistryError error = {0, NULL};
  struct RegistryLock* fair = NULL;
  struct RegistryLock* mutex = NULL;
  bool flag = false;
  EXPECT_CODE(g_api.get_fair_lock(repo, "c_host/queue", &fair, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.get_lock(repo, "c_host/queue", &mutex, &error), REGISTRY_OK);
  if (fair == NULL || mutex == NULL) return;
  EXPECT_CODE(g_api.try_lock(fair, 1000, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.try_lock(mutex, 0, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.persist_if_held(fair, "/fenced-fair", "x", 1, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.unlock(mutex, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.unlock(fair, &error), REGISTRY_OK);
  g_api.release_lock(mutex);
  g_api.release_lock(fair);
  EXPECT_CODE(g_api.get_fair_lock(repo, "bad//name", &fair, &error), REGISTRY_INVALID_ARGUMENT);
  CHECK(fair == NULL);
}

/* What a second thread of the host got from try_lock on `lock` within `timeout_ms`; what it got
 * it gave back. */
struct LockTry {
  struct RegistryLock* lock;
  int64_t timeout_ms;
  int code;
  bool acquired;
};
static void* TryAndUnlock(void* arg) {
  struct LockTry* attempt = arg;
  struct RegistryError error = {0, NULL};
  attempt->code = g_api.try_lock(attempt->lock, attempt->timeout_ms, &attempt->acquired, &error);
  if (attempt->acquired) attempt->code = g_api.unlock(attempt->lock, &error);
  g_api.release_error(&error);
  return NULL;
}
static struct LockTry TryInOtherThread(struct RegistryLock* lock, int64_t timeout_ms) {
  struct LockTry attempt = {lock, timeout_ms, -1, false};
  pthread_t thread;
  if (pthread_create(&thread, NULL, TryAndUnlock, &attempt) == 0) pthread_join(thread, NULL);
  return attempt;
}

/* The semaphore: a handle used with the lock entries, whose permits two threads hold at once
 * with a limit of 2; apart from the mutex of the same name; a bad limit is named. */
void ExerciseSemaphore(struct RegistryRepository* repo) {
  struct RegistryError error = {0, NULL};
  struct RegistryLock* semaphore = NULL;
  struct RegistryLock* mutex = NULL;
  bool flag = false;
  EXPECT_CODE(g_api.get_semaphore(repo, "c_host/pool", 2, &semaphore, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.get_lock(repo, "c_host/pool", &mutex, &error), REGISTRY_OK);
  if (semaphore == NULL || mutex == NULL) return;
  EXPECT_CODE(g_api.try_lock(semaphore, 1000, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  const struct LockTry other = TryInOtherThread(semaphore, 1000);
  CHECK(other.code == REGISTRY_OK && other.acquired);
  EXPECT_CODE(g_api.try_lock(mutex, 0, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.persist_if_held(semaphore, "/fenced-semaphore", "x", 1, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.unlock(mutex, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.unlock(semaphore, &error), REGISTRY_OK);
  g_api.release_lock(mutex);
  g_api.release_lock(semaphore);
  CHECK(g_api.get_semaphore(repo, "c_host/pool", 0, &semaphore, &error) ==
        REGISTRY_INVALID_ARGUMENT);
  CHECK(semaphore == NULL && error.message != NULL && strstr(error.message, "limit 0") != NULL);
  g_api.release_error(&error);
}

/* The read/write lock: a handle per side, used with the lock entries. A second thread takes the
 * read side while this one holds it; meanwhile the write side is refused to this thread at once
 * (it would wait for itself) and not acquired by another in time. Once the read side is given
 * back the write side is taken. A side other than 0 or 1 is named. */
void ExerciseReadWriteLock(struct RegistryRepository* repo) {
  struct RegistryError error = {0, NULL};
  struct RegistryLock* read = NULL;
  struct RegistryLock* write = NULL;
  bool flag = false;
  EXPECT_CODE(g_api.get_read_write_lock(repo, "c_host/config", 0, &read, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.get_read_write_lock(repo, "c_host/config", 1, &write, &error), REGISTRY_OK);
  if (read == NULL || write == NULL) return;
  EXPECT_CODE(g_api.try_lock(read, 1000, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  const struct LockTry reader = TryInOtherThread(read, 1000);
  CHECK(reader.code == REGISTRY_OK && reader.acquired);
  EXPECT_CODE(g_api.try_lock(write, 1000, &flag, &error), REGISTRY_FAILED_PRECONDITION);
  const struct LockTry writer = TryInOtherThread(write, 200);
  CHECK(writer.code == REGISTRY_OK && !writer.acquired);
  EXPECT_CODE(g_api.persist_if_held(read, "/fenced-read", "x", 1, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.unlock(read, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.try_lock(write, 1000, &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.persist_if_held(write, "/fenced-write", "x", 1, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.unlock(write, &error), REGISTRY_OK);
  g_api.release_lock(write);
  g_api.release_lock(read);
  CHECK(g_api.get_read_write_lock(repo, "c_host/config", 2, &read, &error) ==
        REGISTRY_INVALID_ARGUMENT);
  CHECK(read == NULL && error.message != NULL && strstr(error.message, "got 2 ") != NULL);
  g_api.release_error(&error);
}
