// SPDX-License-Identifier: Apache-2.0
// lock/lock_manager.h
//
// Two-tier distributed locks on a Consul-backed repository: the manager that hands out the
// locks of one repository instance. What a lock guarantees to its holders is distributed_lock.h.
//
//   ASSIGN_OR_RETURN(ConsulInstance instance, NewConsulInstance(options));  // instance/instance.h
//   ASSIGN_OR_RETURN(std::unique_ptr<LockManager> manager, LockManager::Create(instance.locks));
//   ASSIGN_OR_RETURN(std::shared_ptr<DistributedLock> lock, manager->GetLock("schema/db1"));
//   RETURN_IF_ERROR(lock->Lock());
//   RETURN_IF_ERROR(PersistIfHeld(*lock, "/metadata/db1/version", "7"));  // fenced write
//   RETURN_IF_ERROR(lock->Unlock());
//
// Tier 1 is process-local: one lock object per name and manager, handed to the threads of the
// process in FIFO order (tickets). Only the thread holding tier 1 talks to Consul for that name.
// Tier 2 is the Consul lock: a transaction `lock <lock key>` with the repository's instance
// session (never a session per attempt; the same as `?acquire=`, but its answer carries the
// key's ModifyIndex); key layout in lock_name.h. A contended waiter blocks on the lock key (a
// blocking query with the remaining time, see TryLock); a key that is free but refuses the
// acquire is under lock-delay and is retried every `lock_retry`. Unlock releases tier 2 first,
// then tier 1, so waiters in other processes get their chance. An uncontended Lock() + Unlock()
// costs exactly one acquire and one release request (plus one session creation if the instance
// has no session yet).
//
// Fencing: every hold of the process uses the instance session, so each hold is told apart by
// the lock key's ModifyIndex at its acquisition. The release (`check-index` + `unlock`) and
// fenced writes (`check-index` + the writes) are transactions checking that index: a delayed or
// resent release or write of one hold never acts on a later hold of the same process.
//
// Built from what it uses (LockManagerParts below), handed over by the instance's composition
// root (instance/instance.h): the instance session, the client, the key watcher, the serial
// executor (lost listeners), the key space and three timings. It sees none of the repository.
//
// Loss: a hold is lost when the instance session is lost (session observer), when the lock key
// is deleted or held by another session (held lock keys are followed by key watches on the
// repository's watch engine, starting `monitor_delay` after the acquisition, so short holds cost
// no extra request), or when the repository closes. The holder then sees lost() == true,
// lost listeners are called, and fenced writes (PersistIfHeld, DeleteIfHeld) fail: they are
// single Consul transactions that check the hold's index on the lock key, so they never write
// once Consul has taken the lock away, whether or not the loss has been noticed locally yet.
//
// Lifetime: destroy the manager before the repository and only when no lock is held or awaited
// (locks still held are then reported lost, and their keys stay bound to the instance session
// until the repository closes). Lock objects may outlive the manager; every call on them then
// fails with FailedPrecondition (Unlock still ends a hold locally).
//
// Thread safety: all methods of LockManager may be called concurrently from any thread.
#ifndef LOCK_LOCK_MANAGER_H_
#define LOCK_LOCK_MANAGER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/serial_executor.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "lock/distributed_lock.h"
#include "lock/lock_provider.h"
#include "repository/instance_session.h"
#include "repository/key_space.h"
#include "watch/key_watcher.h"

namespace registry::lock {

class LockCore;

struct LockManagerOptions {
  // A waiting Lock()/TryLock(), or an Unlock() that cannot reach Consul, gives up with
  // Unavailable once every request has failed for this long. Zero: the repository's session TTL
  // (after which the instance session, and every lock it held, is gone anyway).
  absl::Duration max_unreachable = absl::ZeroDuration();
  // How long a lock is held before the monitor starts watching its key. Loss of the instance
  // session is reported at once regardless. InfiniteDuration() disables key monitoring.
  absl::Duration monitor_delay = absl::Milliseconds(200);
  // Value written into the lock key on every acquisition (for operators), at most 4 KiB.
  std::string holder_value;
};

// Checks `options`. Errors: InvalidArgument naming the field.
absl::Status ValidateLockManagerOptions(const LockManagerOptions& options);

// What a lock manager uses of the instance it is built on: parts the instance owns, which must
// outlive the manager (instance/instance.h hands them over).
struct LockManagerParts {
  InstanceSession& session;        // the one session of the instance
  consul::Client& client;          // its client (servers, token, TLS, failover state)
  consul::Canceller& closing;      // cancelled when the instance closes
  watch::KeyWatcher& key_watches;  // follows held lock keys (closed with the instance)
  // Runs lost listeners and releases off the caller's thread, in order with the instance's
  // connection events; the tasks still queued when the instance closes run before it returns.
  SerialExecutor& tasks;
  const KeySpace& key_space;        // how lock names map to Consul keys
  absl::Duration session_ttl;       // the default of LockManagerOptions::max_unreachable
  absl::Duration block_query_wait;  // server-side wait of a waiter's blocking reads
  absl::Duration lock_retry;        // pause between attempts a lock-delay refused
};

// Hands out the locks of one repository instance: the Consul LockProvider.
class LockManager final : public LockProvider {
 public:
  // A manager of the instance `parts` belong to, sharing its session. At most one manager may
  // exist per instance session at a time: two would share the session, so Consul could not tell
  // their holders apart. The parts must outlive the manager. Errors: InvalidArgument for bad
  // options; FailedPrecondition if another manager of this session exists.
  static absl::StatusOr<std::unique_ptr<LockManager>> Create(const LockManagerParts& parts,
                                                             LockManagerOptions options = {});

  // Fails waiters, reports held locks lost and waits until their lost listeners have run — except
  // when called from inside a lost or connection listener: those run one at a time, so the
  // listeners then run after it returns. Returns promptly (in-flight requests are cancelled)
  // unless a lost listener blocks.
  ~LockManager() override;
  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  // The lock named `name` (see lock_name.h); every call with the same canonical name returns the
  // same object, for the life of the manager. No request is made. Errors: InvalidArgument for a
  // bad name; FailedPrecondition once the repository is closed.
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetLock(absl::string_view name) override;

  // The fair lock named `name`: as GetLock, but across processes the lock goes to the
  // contenders in the order they asked for it (FIFO), and a release wakes only the next one
  // (consul_fair_lock.h). Its Consul keys are apart from the mutex's, so a fair lock and a mutex
  // of the same name are two different locks. Tier 1, re-entry, deadlines, loss and fenced
  // writes are as for the mutex; the fence key of a hold is the lock's owner key. Errors as
  // GetLock.
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetFairLock(absl::string_view name) override;

  // The semaphore named `name` with `limit` permits (1 to kMaxSemaphoreLimit): across every
  // process at most `limit` threads hold it at once (consul_semaphore.h). It is a
  // DistributedLock of capacity() `limit`: Lock/TryLock take a permit for the calling thread
  // (re-entry counts, as for a lock), Unlock gives it back; deadlines, loss, lost listeners and
  // fenced writes (checking the holder's own entry) are as for the mutex. Tier 1 lets up to
  // `limit` threads of the process on to Consul at once, in FIFO order. Its keys are apart from
  // the locks'. Errors as GetLock; InvalidArgument for a limit out of range; FailedPrecondition
  // if this manager already has the semaphore with another limit. A limit that disagrees with
  // the one stored in Consul fails Lock/TryLock with FailedPrecondition naming both (unless no
  // holder is alive: then the new limit replaces the old).
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetSemaphore(absl::string_view name,
                                                                int limit) override;

  // The read side and the write side of the read/write lock named `name`: across every process
  // many threads hold the read lock, or one thread holds the write lock (consul_rw_lock.h).
  // Writer-preferring: a writer waiting for the holders ahead of it holds back the readers that
  // come after it, so writers are not starved (readers may be, while writers keep coming). Each
  // side is a DistributedLock: the read side is held by any number of threads, each taking its
  // own place in Consul; the write side by one. Re-entry into the same side counts; a thread
  // holding one side that asks for the other gets FailedPrecondition at once (an upgrade would
  // wait for itself). Deadlines, loss, lost listeners and fenced writes are as for the mutex
  // (a fenced write checks the holder's own entry). Its keys are apart from every other kind's.
  // Errors as GetLock.
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetReadLock(absl::string_view name) override;
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetWriteLock(absl::string_view name) override;

 private:
  explicit LockManager(std::shared_ptr<LockCore> core);
  std::shared_ptr<LockCore> core_;
};

}  // namespace registry::lock

#endif  // LOCK_LOCK_MANAGER_H_
