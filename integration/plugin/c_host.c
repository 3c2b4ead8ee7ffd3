// SPDX-License-Identifier: Apache-2.0
/* integration/plugin/c_host.c
 *
 * A host written in C11 (no C++ anywhere in this executable) that drives the real Consul plugin
 * through the C ABI alone: dlopen, RegistryPluginInit, create from YAML against a dev server it
 * starts as a child process on port 0, put/get/children/exists/update/delete, ephemeral keys,
 * watches (1.1: ADDED/UPDATED/DELETED through a C callback), locks (1.2: re-entry, fenced
 * writes), fair locks (1.3), semaphores (1.4: two threads' permits), read/write locks (1.5),
 * the export entries (1.8: a subtree's entries, the store's key prefix, a batch checked), error
 * codes and messages, close, and the release of everything the plugin handed out. The lock
 * exercises are in c_host_locks.c.
 *
 * Usage: c_host PLUGIN.so CONSUL_DEV_SERVER_BINARY
 * Prints one line per failed check; exits 0 iff every check passed. */
#ifdef __cplusplus
#error "c_host.c proves the ABI is C: compile it as C"
#endif

#include "integration/plugin/c_host.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin/registry_plugin.h"

extern char** environ;

int g_failures = 0;
struct RegistryPluginApi g_api;

void ExpectCode(int got, int want, struct RegistryError* error, const char* what, int line) {
  if (got != want) {
    fprintf(stderr, "c_host: line %d: %s returned %d, want %d (%s)\n", line, what, got, want,
            error->message != NULL ? error->message : "no message");
    ++g_failures;
  }
  g_api.release_error(error);
}

/* Starts the dev server on a free port and stores "127.0.0.1:PORT" in `address`. */
static pid_t StartDevServer(const char* binary, char* address, size_t address_size) {
  int out[2];
  if (pipe(out) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  char* argv[] = {(char*)binary, (char*)"--http-addr=127.0.0.1:0", (char*)"--session-ttl-min=1s",
                  NULL};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, binary, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return -1;
  }
  /* The server prints its address first; reading stops at EOF, so a dying server cannot hang
   * us. The read end stays open (the server may log more); it is closed at exit. */
  FILE* lines = fdopen(out[0], "r");
  const char* prefix = "consul-dev-server listening on ";
  char line[256];
  while (lines != NULL && fgets(line, sizeof(line), lines) != NULL) {
    if (strncmp(line, prefix, strlen(prefix)) == 0) {
      snprintf(address, address_size, "%s", line + strlen(prefix));
      address[strcspn(address, "\r\n")] = '\0';
      return pid;
    }
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

static void OnConnectionState(int32_t state, void* user_data) {
  (void)state;
  ++*(int*)user_data;
}

/* What a watch callback saw; filled on a plugin thread, read under `mu`. */
#define MAX_EVENTS 8
struct Seen {
  pthread_mutex_t mu;
  pthread_cond_t changed;
  int count;
  int32_t types[MAX_EVENTS];
  char keys[MAX_EVENTS][64];
  char values[MAX_EVENTS][16];
  bool known[MAX_EVENTS];
};

static void OnData(const struct RegistryDataEvent* event, void* user_data) {
  struct Seen* seen = (struct Seen*)user_data;
  pthread_mutex_lock(&seen->mu);
  if (seen->count < MAX_EVENTS) {
    int i = seen->count;
    seen->types[i] = event->type;
    snprintf(seen->keys[i], sizeof(seen->keys[i]), "%s", event->key);
    snprintf(seen->values[i], sizeof(seen->values[i]), "%s",
             event->value_known ? event->value : "<unknown>");
    seen->known[i] = event->value_known;
  }
  ++seen->count;
  pthread_cond_broadcast(&seen->changed);
  pthread_mutex_unlock(&seen->mu);
}

/* Waits until `seen` holds at least `n` events or 10 s passed; returns the count. */
static int WaitForEvents(struct Seen* seen, int n) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 10;
  pthread_mutex_lock(&seen->mu);
  while (seen->count < n) {
    if (pthread_cond_timedwait(&seen->changed, &seen->mu, &deadline) == ETIMEDOUT) break;
  }
  int count = seen->count;
  pthread_mutex_unlock(&seen->mu);
  return count;
}

static void ExerciseWatch(struct RegistryRepository* repo) {
  struct RegistryError error = {0, NULL};
  struct Seen seen;
  memset(&seen, 0, sizeof(seen));
  pthread_mutex_init(&seen.mu, NULL);
  pthread_cond_init(&seen.changed, NULL);
  int64_t watch = 0;
  EXPECT_CODE(g_api.add_data_listener(repo, "/watched", 0, &OnData, &seen, &watch, &error),
              REGISTRY_OK);
  /* Rapid writes to one key may be coalesced into one event: wait for each before the next. */
  EXPECT_CODE(g_api.persist(repo, "/watched/k", "v1", 2, &error), REGISTRY_OK);
  CHECK(WaitForEvents(&seen, 1) == 1);
  EXPECT_CODE(g_api.update(repo, "/watched/k", "v2", 2, &error), REGISTRY_OK);
  CHECK(WaitForEvents(&seen, 2) == 2);
  EXPECT_CODE(g_api.delete_key(repo, "/watched", &error), REGISTRY_OK);
  CHECK(WaitForEvents(&seen, 3) == 3);
  pthread_mutex_lock(&seen.mu);
  CHECK(seen.types[0] == REGISTRY_DATA_ADDED && strcmp(seen.values[0], "v1") == 0);
  CHECK(seen.types[1] == REGISTRY_DATA_UPDATED && strcmp(seen.values[1], "v2") == 0);
  CHECK(seen.types[2] == REGISTRY_DATA_DELETED && strcmp(seen.keys[2], "/watched/k") == 0);
  pthread_mutex_unlock(&seen.mu);
  EXPECT_CODE(g_api.remove_data_listener(repo, watch, &error), REGISTRY_OK);
  /* After removal returns no callback runs, so `seen` may go away with this frame. */
  pthread_cond_destroy(&seen.changed);
  pthread_mutex_destroy(&seen.mu);
}

/* What list_entries reported to OnEntry. */
struct Listed {
  int count;
  int ephemeral;
  int binary_exact; /* "/export/bin" came with its 3 bytes and a NUL after them */
};

static void OnEntry(const struct RegistryEntry* entry, void* user_data) {
  struct Listed* listed = user_data;
  ++listed->count;
  if (entry->ephemeral) ++listed->ephemeral;
  if (strcmp(entry->key, "/export/bin") == 0 && entry->value_len == 3 &&
      memcmp(entry->value, "a\0b", 4) == 0) {
    listed->binary_exact = 1;
  }
}

/* 1.8: a subtree's keys with raw values and the ephemeral ones marked, the store's name of the
 * namespace root, and the checks of persist_batch without its writes. */
static void ExerciseExport(struct RegistryRepository* repo) {
  struct RegistryError error = {0, NULL};
  EXPECT_CODE(g_api.persist(repo, "/export/bin", "a\0b", 3, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.persist(repo, "/export/plain", "p", 1, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.persist_ephemeral(repo, "/export/live", "i", 1, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.persist(repo, "/exportx", "a sibling", 9, &error), REGISTRY_OK);
  struct Listed listed = {0, 0, 0};
  EXPECT_CODE(g_api.list_entries(repo, "/export", &OnEntry, &listed, &error), REGISTRY_OK);
  CHECK(listed.count == 3 && listed.ephemeral == 1 && listed.binary_exact);

  char* prefix = NULL;
  size_t prefix_len = 0;
  EXPECT_CODE(g_api.store_key_prefix(repo, &prefix, &prefix_len, &error), REGISTRY_OK);
  CHECK(prefix != NULL && prefix_len == 7 && strcmp(prefix, "c_host/") == 0);
  g_api.release_value(prefix);

  const char* keys[] = {"/export/new", "/export/../bad"};
  const char* values[] = {"n", "b"};
  const size_t lens[] = {1, 1};
  size_t bad = 0;
  EXPECT_CODE(g_api.check_batch(repo, keys, values, lens, 2, &bad, &error),
              REGISTRY_INVALID_ARGUMENT);
  CHECK(bad == 1);
  EXPECT_CODE(g_api.check_batch(repo, keys, values, lens, 1, &bad, &error), REGISTRY_OK);
  CHECK(bad == 1);
  bool exists = true;
  EXPECT_CODE(g_api.exists(repo, "/export/new", &exists, &error), REGISTRY_OK);
  CHECK(!exists);
  EXPECT_CODE(g_api.delete_key(repo, "/export", &error), REGISTRY_OK);
  EXPECT_CODE(g_api.delete_key(repo, "/exportx", &error), REGISTRY_OK);
}

/* Checks that `children` holds exactly `want` (count `n`), in order. */
static void ExpectChildren(char** children, size_t count, const char* const* want, size_t n) {
  CHECK(count == n);
  for (size_t i = 0; i < count && i < n; ++i) CHECK(strcmp(children[i], want[i]) == 0);
}

/* Long by design, as main(): the repository calls in one linear script. */
static void Exercise(struct RegistryRepository* repo) {
  struct RegistryError error = {0, NULL};
  char* value = NULL;
  size_t len = 0;
  bool found = true;
  bool flag = false;

  /* put / get, including a value with an embedded NUL. */
  EXPECT_CODE(g_api.persist(repo, "/metadata/sharding_db", "v1", 2, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.get(repo, "/metadata/sharding_db", &value, &len, &found, &error), REGISTRY_OK);
  CHECK(found && len == 2 && value != NULL && memcmp(value, "v1", 3) == 0);
  g_api.release_value(value);
  EXPECT_CODE(g_api.persist(repo, "/bin", "a\0b", 3, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.get(repo, "/bin", &value, &len, &found, &error), REGISTRY_OK);
  CHECK(found && len == 3 && memcmp(value, "a\0b", 3) == 0);
  g_api.release_value(value);

  /* An absent key is a result, not an error. */
  EXPECT_CODE(g_api.get(repo, "/absent", &value, &len, &found, &error), REGISTRY_OK);
  CHECK(!found && value == NULL && len == 0);

  /* Children: direct names, sorted. */
  EXPECT_CODE(g_api.persist(repo, "/metadata/sharding_db/schemas/s2", "", 0, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.persist(repo, "/metadata/sharding_db/schemas/s1/tables/t1", "t", 1, &error),
              REGISTRY_OK);
  char** children = NULL;
  size_t count = 0;
  EXPECT_CODE(g_api.get_children(repo, "/metadata/sharding_db/schemas", &children, &count, &error),
              REGISTRY_OK);
  const char* const schemas[] = {"s1", "s2"};
  ExpectChildren(children, count, schemas, 2);
  g_api.release_children(children, count);

  /* exists / update. */
  EXPECT_CODE(g_api.exists(repo, "/metadata/sharding_db", &flag, &error), REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.update(repo, "/never/written", "x", 1, &error), REGISTRY_NOT_FOUND);
  EXPECT_CODE(g_api.update(repo, "/metadata/sharding_db", "v2", 2, &error), REGISTRY_OK);
  EXPECT_CODE(g_api.get(repo, "/metadata/sharding_db", &value, &len, &found, &error), REGISTRY_OK);
  CHECK(found && strcmp(value, "v2") == 0);
  g_api.release_value(value);

  /* A malformed key: InvalidArgument, and the message names the key. */
  int code = g_api.persist(repo, "no-leading-slash", "x", 1, &error);
  CHECK(code == REGISTRY_INVALID_ARGUMENT && error.code == REGISTRY_INVALID_ARGUMENT);
  CHECK(error.message != NULL && strstr(error.message, "no-leading-slash") != NULL);
  g_api.release_error(&error);
  CHECK(error.message == NULL);

  /* Ephemeral keys and exclusivity. */
  int notices = 0;
  int64_t listener = -1;
  EXPECT_CODE(g_api.add_connection_listener(repo, &OnConnectionState, &notices, &listener, &error),
              REGISTRY_OK);
  EXPECT_CODE(
      g_api.persist_ephemeral(repo, "/nodes/compute_nodes/online/proxy/c1", "up", 2, &error),
      REGISTRY_OK);
  EXPECT_CODE(g_api.persist_exclusive_ephemeral(repo, "/leader", "me", 2, &flag, &error),
              REGISTRY_OK);
  CHECK(flag);
  EXPECT_CODE(g_api.persist_exclusive_ephemeral(repo, "/leader", "again", 5, &flag, &error),
              REGISTRY_OK);
  CHECK(!flag);
  EXPECT_CODE(g_api.remove_connection_listener(repo, listener, &error), REGISTRY_OK);

  /* Recursive delete. */
  EXPECT_CODE(g_api.delete_key(repo, "/metadata", &error), REGISTRY_OK);
  EXPECT_CODE(g_api.get_children(repo, "/metadata", &children, &count, &error), REGISTRY_OK);
  CHECK(count == 0);
  g_api.release_children(children, count);

  ExerciseWatch(repo);
  ExerciseExport(repo);
  ExerciseLock(repo);
  ExerciseFairLock(repo);
  ExerciseSemaphore(repo);
  ExerciseReadWriteLock(repo);
  EXPECT_CODE(g_api.get(repo, "/fenced", &value, &len, &found, &error), REGISTRY_OK);
  CHECK(found && strcmp(value, "under lock") == 0);
  g_api.release_value(value);
}

/* Long by design: one linear script of the C ABI, so that a failing CHECK's line names the step. */
int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PLUGIN.so CONSUL_DEV_SERVER\n", argv[0]);
    return 2;
  }
  char address[256];
  pid_t server = StartDevServer(argv[2], address, sizeof(address));
  if (server < 0) {
    fprintf(stderr, "c_host: cannot start %s\n", argv[2]);
    return 1;
  }

  /* As host/loader.cc: the plugin's static state stays mapped after dlclose. */
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == NULL) {
    fprintf(stderr, "c_host: dlopen: %s\n", dlerror());
    kill(server, SIGKILL);
    return 1;
  }
  /* POSIX's way to turn dlsym's void* into a function pointer in ISO C. */
  RegistryPluginInitFunc init = NULL;
  *(void**)(&init) = dlsym(library, REGISTRY_PLUGIN_INIT_SYMBOL);
  CHECK(init != NULL);
  struct RegistryError error = {0, NULL};
  if (init != NULL) {
    memset(&g_api, 0, sizeof(g_api));
    g_api.struct_size = sizeof(g_api);
    int code = init(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, &g_api, &error);
    CHECK(code == REGISTRY_OK);
    CHECK(g_api.abi_version == REGISTRY_PLUGIN_ABI_VERSION_CURRENT);
    CHECK(g_api.struct_size >= REGISTRY_PLUGIN_API_SIZE_1_0);
    CHECK(REGISTRY_PLUGIN_API_HAS(&g_api, destroy) && g_api.destroy != NULL);
    CHECK(REGISTRY_PLUGIN_API_HAS(&g_api, delete_if_held) && g_api.delete_if_held != NULL);
    CHECK(REGISTRY_PLUGIN_API_HAS(&g_api, get_fair_lock) && g_api.get_fair_lock != NULL);
    CHECK(REGISTRY_PLUGIN_API_HAS(&g_api, get_semaphore) && g_api.get_semaphore != NULL);
    CHECK(REGISTRY_PLUGIN_API_HAS(&g_api, get_read_write_lock) &&
          g_api.get_read_write_lock != NULL);
    CHECK(REGISTRY_PLUGIN_API_HAS(&g_api, check_batch) && g_api.list_entries != NULL &&
          g_api.store_key_prefix != NULL && g_api.check_batch != NULL);
    CHECK(strcmp(g_api.repository_type, "Consul") == 0);
  }

  if (g_failures == 0) {
    /* Bad config: InvalidArgument naming the prop and its value. */
    const char* bad_keys[] = {"namespace", "server-lists", "timeToLiveSeconds"};
    const char* bad_values[] = {"c_host", address, "3x"};
    struct RegistryRepository* repo = NULL;
    int code = g_api.create_from_props(bad_keys, bad_values, 3, &repo, &error);
    CHECK(code == REGISTRY_INVALID_ARGUMENT && repo == NULL);
    CHECK(error.message != NULL && strstr(error.message, "timeToLiveSeconds") != NULL &&
          strstr(error.message, "3x") != NULL);
    g_api.release_error(&error);

    /* The real thing: YAML text, with the namespace overridden as a host flag would. */
    char yaml[512];
    snprintf(yaml, sizeof(yaml),
             "mode:\n"
             "  type: Cluster\n"
             "  repository:\n"
             "    type: consul\n"
             "    props:\n"
             "      namespace: from_yaml\n"
             "      server-lists: %s\n"
             "      timeToLiveSeconds: 10\n",
             address);
    const char* override_keys[] = {"namespace"};
    const char* override_values[] = {"c_host"};
    code = g_api.create_from_yaml(yaml, strlen(yaml), override_keys, override_values, 1, &repo,
                                  &error);
    if (code != REGISTRY_OK) {
      fprintf(stderr, "c_host: create_from_yaml: %d %s\n", code,
              error.message != NULL ? error.message : "");
      ++g_failures;
    }
    g_api.release_error(&error);
    if (repo != NULL) {
      Exercise(repo);
      EXPECT_CODE(g_api.close(repo, &error), REGISTRY_OK);
      EXPECT_CODE(g_api.close(repo, &error), REGISTRY_OK);
      EXPECT_CODE(g_api.persist(repo, "/after/close", "x", 1, &error),
                  REGISTRY_FAILED_PRECONDITION);
      g_api.destroy(repo);
    }

    /* The ephemeral key went with the closed session; the override put keys under c_host. */
    const char* keys[] = {"namespace", "server-lists"};
    const char* values[] = {"c_host", address};
    code = g_api.create_from_props(keys, values, 2, &repo, &error);
    CHECK(code == REGISTRY_OK);
    g_api.release_error(&error);
    if (repo != NULL) {
      bool exists = true;
      EXPECT_CODE(g_api.exists(repo, "/nodes/compute_nodes/online/proxy/c1", &exists, &error),
                  REGISTRY_OK);
      CHECK(!exists);
      EXPECT_CODE(g_api.exists(repo, "/bin", &exists, &error), REGISTRY_OK);
      CHECK(exists);
      EXPECT_CODE(g_api.delete_key(repo, "/", &error), REGISTRY_OK);
      g_api.destroy(repo);
    }
  }

  dlclose(library);
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  if (g_failures != 0) {
    fprintf(stderr, "c_host: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("c_host: every check passed\n");
  return 0;
}
