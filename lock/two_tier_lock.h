// SPDX-License-Identifier: Apache-2.0
// lock/two_tier_lock.h
//
// TwoTierLock is the one implementation of DistributedLock (distributed_lock.h) that a
// LockManager hands out (internal to lock/): tier 1, the process-local FIFO lock with a slot per
// holding thread (1 for a lock, the limit for a semaphore), hold bookkeeping, loss and lost
// listeners, written once over a tier 2 (remote_lock.h: the Consul recipe of its kind). Fenced
// writes are in fenced_write.cc.
//
// Lock order: the lock's mutex and its core's are never held together (lock_core.h).
//
// Thread safety: as DistributedLock.
#ifndef LOCK_TWO_TIER_LOCK_H_
#define LOCK_TWO_TIER_LOCK_H_

#include <cstdint>
#include <map>
#include <memory>
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
#include "consul/txn.h"
#include "lock/distributed_lock.h"
#include "lock/lock_kind.h"
#include "lock/remote_lock.h"

namespace registry::lock {

class LockCore;

class TwoTierLock final : public DistributedLock, public std::enable_shared_from_this<TwoTierLock> {
 public:
  // A lock named `name` (`noun` "lock", "semaphore", ... in errors) whose tier 2 is `remote`
  // (made on `core`), which up to `capacity` threads may hold at once; `kind` labels its
  // metrics.
  TwoTierLock(std::shared_ptr<LockCore> core, std::string name, absl::string_view noun,
              int capacity, std::unique_ptr<RemoteLock> remote, LockKind kind);
  ~TwoTierLock() override;

  // Where the lock lives in Consul: the mutex's key ("<ns>/lock/a/b/"), the fair lock's owner
  // key, the holders record of a semaphore or read/write lock. For diagnostics and tests, as is
  // QueueLength(): neither is part of the DistributedLock contract (a lock of another store has no
  // Consul key).
  const std::string& consul_key() const;
  // How many threads of this process are queued for the lock (not counting those acquiring or
  // holding it).
  int QueueLength() const;

  // DistributedLock.
  const std::string& name() const override { return name_; }
  absl::Status Lock() override;
  absl::StatusOr<bool> TryLock(absl::Duration timeout) override;
  absl::Status Unlock() override;
  int capacity() const override { return capacity_; }
  bool IsHeldByCurrentThread() const override;
  int HoldCount() const override;
  absl::Status lost_reason() const override;
  int AddLostListener(LostListener listener) override;
  void RemoveLostListener(int id) override;

  // --- For LockCore -----------------------------------------------------------------------

  // Makes `other` the other side of this read/write lock side: a thread holding one side may
  // not take the other. Call before the lock is handed out.
  void set_other_side(std::weak_ptr<TwoTierLock> other) { other_side_ = std::move(other); }
  // Marks the holds acquired with `session_id` lost.
  void OnSessionLost(const std::string& session_id);
  // Fails later calls and waiters with `reason`; the current holds are lost.
  void Close(const absl::Status& reason);

 private:
  absl::Status FencedPersist(absl::string_view key, absl::string_view value) override;
  absl::Status FencedDelete(absl::string_view key) override;

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
  const LockKind kind_;     // labels its metrics
  // The other side of a read/write lock (null for other locks): a thread holding one side may
  // not take the other. Set before the lock is handed out, never changed.
  std::weak_ptr<TwoTierLock> other_side_;
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

// `lock` as the TwoTierLock every LockManager makes (std::bad_cast if it is not one): for
// diagnostics and tests that need consul_key() or QueueLength().
inline const TwoTierLock& TwoTierOf(const DistributedLock& lock) {
  return dynamic_cast<const TwoTierLock&>(lock);
}

}  // namespace registry::lock

#endif  // LOCK_TWO_TIER_LOCK_H_
