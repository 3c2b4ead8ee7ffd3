// lock/lock_manager.h
//
// Two-tier distributed locks on a Consul-backed repository.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<LockManager> manager, NewLockManager(*repository));
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
// Thread safety: all methods of LockManager and DistributedLock may be called concurrently from
// any thread.
#ifndef LOCK_LOCK_MANAGER_H_
#define LOCK_LOCK_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/listener_registry.h"
#include "base/plugin_metrics.h"
#include "consul/txn.h"
#include "lock/remote_lock.h"
#include "registry/repository.h"
#include "repository/instance_session.h"

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

// A named lock shared by every thread of the process that uses the same manager; or a
// semaphore, which up to capacity() threads (across every process) hold at once, each with a
// permit of its own: for a semaphore, "holds the lock" below reads "holds a permit".
class DistributedLock : public std::enable_shared_from_this<DistributedLock> {
 public:
  // Called once per lost hold, on a listener worker of the repository's watch engine (never on a
  // thread doing network I/O for watches or renewing the session, never while any lock of the
  // manager is locked internally), with the lock's canonical name and why it was lost. Must
  // return promptly; may call any method of the lock except Lock/TryLock.
  using LostListener = std::function<void(const std::string& name, const absl::Status& reason)>;

  DistributedLock(const DistributedLock&) = delete;
  DistributedLock& operator=(const DistributedLock&) = delete;
  ~DistributedLock();

  // The canonical lock name ("a/b" for "/a/b") and its Consul key ("<ns>/lock/a/b/"; a fair
  // lock's queue prefix, "<ns>/fair-lock/a/b/").
  const std::string& name() const { return name_; }
  const std::string& consul_key() const;

  // Blocks until the calling thread holds the lock. Re-entry by the holding thread increments
  // the hold count without any request. Errors (nothing held afterwards): FailedPrecondition
  // when the repository is closed or the manager destroyed (also while waiting: waiters return
  // promptly); Unavailable when Consul was unreachable for longer than max_unreachable; Aborted
  // on re-entry into a hold that was lost (Unlock it first); other Consul errors as reported.
  absl::Status Lock();

  // As Lock(), but gives up at now + `timeout`: one deadline for both tiers, the remaining time
  // recomputed before every wait, and every request (session creation, acquire, reads) cut at
  // the deadline, so the call returns by then however slow Consul is. Returns true iff the lock
  // is now held; false when the deadline passed first (never before it). A zero or negative
  // timeout makes a single attempt that does not wait (re-entry still succeeds); its requests
  // are bounded by the request timeout. After false or an error the caller holds neither tier.
  // Unavailable instead of false when the attempts were failing (Consul unreachable) at the
  // deadline; other errors as Lock().
  absl::StatusOr<bool> TryLock(absl::Duration timeout);

  // Ends one hold of the calling thread; the last one releases the Consul lock (unless the hold
  // was lost), then the local lock. FailedPrecondition (nothing changes) if the calling thread
  // does not hold the lock. The hold always ends locally; an error (Unavailable after
  // max_unreachable, or another Consul error) means Consul may still bind the key to the
  // instance session until the session ends.
  absl::Status Unlock();

  // How many threads may hold it at once: 1 for a lock, the limit for a semaphore.
  int capacity() const { return capacity_; }

  // True iff the calling thread holds the lock.
  bool IsHeldByCurrentThread() const;
  // The calling thread's hold count (0 if it does not hold the lock).
  int HoldCount() const;
  // How many threads of this process are queued for the lock (not counting the one acquiring
  // or holding it). For diagnostics and tests.
  int QueueLength() const;

  // True iff the current hold (or, when none, the most recent one) was lost. Reset by the next
  // acquisition.
  bool lost() const;
  // Why the current or most recent hold was lost; OK when it was not.
  absl::Status lost_reason() const;

  // Registers `listener` for losses of any later-lost hold; returns an id for removal. After
  // RemoveLostListener returns, the listener is not running and is not called again (unless it
  // is removing itself from inside its own call). An exception it throws is logged and goes no
  // further.
  int AddLostListener(LostListener listener);
  void RemoveLostListener(int id);

 private:
  friend class LockCore;
  friend absl::Status PersistIfHeld(DistributedLock& lock, absl::string_view key,
                                    absl::string_view value);
  friend absl::Status DeleteIfHeld(DistributedLock& lock, absl::string_view key);

  // A lock (`noun` "lock") or semaphore whose tier 2 is `remote` (made on `core`), which up to
  // `capacity` threads may hold at once; `kind` labels its metrics.
  DistributedLock(std::shared_ptr<LockCore> core, std::string name, absl::string_view noun,
                  int capacity, std::unique_ptr<RemoteLock> remote, metrics::LockKind kind);

  // Lock/TryLock with `deadline` (InfiniteFuture: no deadline). Requests are cut at
  // `request_deadline` (`deadline`, or InfiniteFuture for Lock and the single attempt of a
  // non-positive timeout). `op` names the call in errors.
  absl::StatusOr<bool> Acquire(absl::Time deadline, absl::Time request_deadline,
                               absl::string_view op);
  // Gives tier 1 to a task of the manager (LockCore::Deliver) that releases what an acquire
  // whose outcome is unknown left pending (RemoteLock::ReleasePending), then frees tier 1. The
  // caller returns at once, so that a TryLock never outlives its deadline, and no local thread
  // takes the lock before Consul is known not to hold anything of that acquire.
  void ReleaseInBackground(PendingRelease pending) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A fenced transaction: check-index (the hold's) on its fence key, then `writes`, which leave
  // key `key` (Consul key `consul_key`, and with `tree` its subtree) persistent or deleted.
  absl::Status FencedWrite(absl::string_view op, absl::string_view key,
                           const std::string& consul_key, bool tree,
                           std::vector<consul::TxnOp> writes);

  // Follows the fence key of hold `hold` (LockCore::WatchHeldKey).
  void WatchHeldKey(uint64_t hold, const RemoteHold& remote);
  // Marks the holds in `ids` lost with `reason`.
  void MarkAllLost(const std::vector<uint64_t>& ids, const absl::Status& reason);
  // Marks hold `hold_id` lost (if it is current and not lost yet) and schedules the listeners.
  void MarkLost(uint64_t hold_id, absl::Status reason);
  // Marks the holds acquired with `session_id` lost.
  void OnSessionLost(const std::string& session_id);
  // Fails later calls and waiters with `reason`; the current holds are lost.
  void Close(const absl::Status& reason);
  // Calls the listeners about a lost hold (as a task of the manager, LockCore::Deliver).
  void NotifyLost(const absl::Status& reason);
  absl::Status Prefixed(absl::string_view op, const absl::Status& status) const;

  // One thread's hold: tier 1 (a slot) and, once acquired, tier 2.
  struct Hold {
    int count = 0;  // re-entries; 0 while acquiring or releasing
    RemoteHold remote;
    uint64_t id = 0;         // unique per manager
    uint64_t key_watch = 0;  // the key watch following remote.key; 0: none
    absl::Status lost;       // not OK: the hold was lost, and why
  };

  // The hold of thread `thread` (count > 0), or null.
  Hold* HeldBy(std::thread::id thread) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const Hold* HeldBy(std::thread::id thread) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The held hold with id `id`, or null.
  Hold* HoldWithId(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<LockCore> core_;
  const std::string name_;
  const std::string noun_;  // "lock", "semaphore": for errors
  const std::string what_;  // "lock 'a/b'", "semaphore 'a/b'"
  const int capacity_;      // how many threads may hold it at once
  const metrics::LockKind kind_;
  // The other side of a read/write lock (null for other locks): a thread holding one side may
  // not take the other. Set before the lock is handed out, never changed.
  std::weak_ptr<DistributedLock> other_side_;
  // Tier 2: used only by threads holding a slot of tier 1 (and the tasks that keep one
  // reserved); one at a time when the capacity is 1.
  const std::unique_ptr<RemoteLock> remote_;

  mutable absl::Mutex mu_;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);  // not OK once closed: why
  // Tier 1: the threads acquiring, holding or releasing a slot, and the waiting tickets in
  // arrival order.
  std::map<std::thread::id, Hold> holds_ ABSL_GUARDED_BY(mu_);
  // Slots reserved by ReleaseInBackground's tasks: nobody may take them.
  int releasing_unknown_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<uint64_t> waiting_ ABSL_GUARDED_BY(mu_);
  // The most recent hold, current or ended, for lost() of threads that hold nothing.
  uint64_t latest_hold_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status latest_lost_ ABSL_GUARDED_BY(mu_);
  // Called by tasks of the manager (LockCore::Deliver); thread-safe on its own.
  ListenerRegistry<const std::string&, const absl::Status&> listeners_{"lock lost listener"};
};

// Hands out the locks of one repository instance.
class LockManager {
 public:
  // A manager sharing `session` (and its client, key space and options). At most one manager may
  // exist per instance session at a time: two would share the session, so Consul could not tell
  // their holders apart. Errors: InvalidArgument for bad options; FailedPrecondition if another
  // manager of this session exists.
  static absl::StatusOr<std::unique_ptr<LockManager>> Create(InstanceSession& session,
                                                             LockManagerOptions options = {});

  // Fails waiters, reports held locks lost and waits until their lost listeners have run — except
  // when called from inside a lost or connection listener: those run one at a time, so the
  // listeners then run after it returns. Returns promptly (in-flight requests are cancelled)
  // unless a lost listener blocks.
  ~LockManager();
  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  // The lock named `name` (see lock_name.h); every call with the same canonical name returns the
  // same object, for the life of the manager. No request is made. Errors: InvalidArgument for a
  // bad name; FailedPrecondition once the repository is closed.
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetLock(absl::string_view name);

  // The fair lock named `name`: as GetLock, but across processes the lock goes to the
  // contenders in the order they asked for it (FIFO), and a release wakes only the next one
  // (consul_fair_lock.h). Its Consul keys are apart from the mutex's, so a fair lock and a mutex
  // of the same name are two different locks. Tier 1, re-entry, deadlines, loss and fenced
  // writes are as for the mutex; the fence key of a hold is the lock's owner key. Errors as
  // GetLock.
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetFairLock(absl::string_view name);

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
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetSemaphore(absl::string_view name, int limit);

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
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetReadLock(absl::string_view name);
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetWriteLock(absl::string_view name);

 private:
  explicit LockManager(std::shared_ptr<LockCore> core);
  std::shared_ptr<LockCore> core_;
};

// LockManager::Create on the instance session of `repository`. Errors: FailedPrecondition if
// the repository is not Consul-backed (made by NewConsulRepository) or already has a manager;
// InvalidArgument for bad options.
absl::StatusOr<std::unique_ptr<LockManager>> NewLockManager(Repository& repository,
                                                            LockManagerOptions options = {});

// Sets repository key `key` to `value` iff this instance holds `lock` at that moment, as one
// Consul transaction (check-index of the hold on the lock key + set). The calling thread must hold
// the lock. Like Repository::Persist it creates or overwrites the key and leaves it persistent (an
// ephemeral key of this instance is no longer re-created after a session loss). Errors:
// InvalidArgument for a bad key or a value over 512 KiB; FailedPrecondition if the calling thread
// does not hold the lock; Aborted if the hold was lost (the loss is then reported as any other);
// Consul errors as reported. Every message names the lock and the key.
absl::Status PersistIfHeld(DistributedLock& lock, absl::string_view key, absl::string_view value);

// Deletes repository key `key` and its subtree (as Repository::Delete: ephemeral keys of this
// instance among them are not re-created after a session loss) iff this instance holds `lock`,
// as one Consul transaction. Errors as PersistIfHeld.
absl::Status DeleteIfHeld(DistributedLock& lock, absl::string_view key);

}  // namespace registry::lock

#endif  // LOCK_LOCK_MANAGER_H_
