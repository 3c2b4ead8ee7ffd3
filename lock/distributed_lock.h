// SPDX-License-Identifier: Apache-2.0
// lock/distributed_lock.h
//
// DistributedLock is what every holder of a lock uses: a named lock that one thread (across
// every process) holds at a time; or a semaphore, which up to capacity() threads hold at once,
// each with a permit of its own ("holds the lock" below then reads "holds a permit"); or one side
// of a read/write lock. A LockManager (lock_manager.h) hands them out; the plugin's C ABI serves
// them to hosts. This header is the whole contract: the two-tier implementation behind it is
// internal to lock/ (two_tier_lock.h), and a test double may implement it alike.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<DistributedLock> lock, manager->GetLock("schema/db1"));
//   RETURN_IF_ERROR(lock->Lock());
//   RETURN_IF_ERROR(PersistIfHeld(*lock, "/metadata/db1/version", "7"));  // fenced write
//   RETURN_IF_ERROR(lock->Unlock());
//
// Holds are per thread and re-entrant. A hold is lost when the instance session is lost, when
// the lock's key is deleted or taken by another session, or when the repository closes; the
// holder then sees lost(), its lost listeners are called, and fenced writes fail.
//
// Thread safety: every method may be called concurrently from any thread. A lock may outlive its
// manager; every call then fails with FailedPrecondition (Unlock still ends a hold locally).
#ifndef LOCK_DISTRIBUTED_LOCK_H_
#define LOCK_DISTRIBUTED_LOCK_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::lock {

class DistributedLock {
 public:
  // Called once per lost hold, on a thread that does no network I/O for watches and does not
  // renew the session (a listener worker of the repository's watch engine), never while the
  // lock is locked internally, with the lock's canonical name and why it was lost. Must return
  // promptly; may call any method of the lock except Lock/TryLock.
  using LostListener = std::function<void(const std::string& name, const absl::Status& reason)>;

  virtual ~DistributedLock() = default;
  DistributedLock(const DistributedLock&) = delete;
  DistributedLock& operator=(const DistributedLock&) = delete;

  // The canonical lock name ("a/b" for "/a/b").
  virtual const std::string& name() const = 0;

  // Blocks until the calling thread holds the lock. Re-entry by the holding thread increments
  // the hold count without any request. Errors (nothing held afterwards): FailedPrecondition
  // when the repository is closed or the manager destroyed (also while waiting: waiters return
  // promptly), or when the thread holds the other side of a read/write lock; Unavailable when
  // the store was unreachable for longer than the manager's max_unreachable; Aborted on re-entry
  // into a hold that was lost (Unlock it first); other store errors as reported.
  virtual absl::Status Lock() = 0;

  // As Lock(), but gives up at now + `timeout`: one deadline for both tiers, the remaining time
  // recomputed before every wait, and every request cut at the deadline, so the call returns by
  // then however slow the store is. Returns true iff the lock is now held; false when the
  // deadline passed first (never before it). A zero or negative timeout makes a single attempt
  // that does not wait (re-entry still succeeds) and returns within the client's request
  // timeout, the session's creation included. After false or an error the caller holds
  // nothing. Unavailable instead of false when the attempts were failing (store unreachable) at
  // the deadline; other errors as Lock().
  virtual absl::StatusOr<bool> TryLock(absl::Duration timeout) = 0;

  // Ends one hold of the calling thread; the last one releases the lock in the store (unless the
  // hold was lost), then locally. FailedPrecondition (nothing changes) if the calling thread does
  // not hold the lock. The hold always ends locally; an error (Unavailable after
  // max_unreachable, or another store error) means the store may still bind the lock's key to
  // the instance session until the session ends.
  virtual absl::Status Unlock() = 0;

  // How many threads may hold it at once: 1 for a lock and a write side, the limit for a
  // semaphore, INT_MAX for a read side.
  virtual int capacity() const = 0;

  // True iff the calling thread holds the lock.
  virtual bool IsHeldByCurrentThread() const = 0;
  // The calling thread's hold count (0 if it does not hold the lock).
  virtual int HoldCount() const = 0;

  // Why the calling thread's current hold (or, when it holds none, the most recent hold) was
  // lost; OK when it was not. Reset by the next acquisition.
  virtual absl::Status lost_reason() const = 0;
  // True iff lost_reason() is not OK.
  bool lost() const { return !lost_reason().ok(); }

  // Registers `listener` for losses of any later-lost hold; returns an id for removal. After
  // RemoveLostListener returns, the listener is not running and is not called again (unless it
  // is removing itself from inside its own call). An exception it throws is logged and goes no
  // further.
  virtual int AddLostListener(LostListener listener) = 0;
  virtual void RemoveLostListener(int id) = 0;

 protected:
  DistributedLock() = default;

 private:
  friend absl::Status PersistIfHeld(DistributedLock& lock, absl::string_view key,
                                    absl::string_view value);
  friend absl::Status DeleteIfHeld(DistributedLock& lock, absl::string_view key);

  // What PersistIfHeld and DeleteIfHeld do, with their contracts.
  virtual absl::Status FencedPersist(absl::string_view key, absl::string_view value) = 0;
  virtual absl::Status FencedDelete(absl::string_view key) = 0;
};

// Sets repository key `key` to `value` iff this instance holds `lock` at that moment, as one
// store transaction (a check of the hold on the lock's key + the set). The calling thread must
// hold the lock. Like Repository::Persist it creates or overwrites the key and leaves it
// persistent (an ephemeral key of this instance is no longer re-created after a session loss).
// Errors: InvalidArgument for a bad key or a value over 512 KiB; FailedPrecondition if the
// calling thread does not hold the lock; Aborted if the hold was lost (the loss is then reported
// as any other); store errors as reported. Every message names the lock and the key.
inline absl::Status PersistIfHeld(DistributedLock& lock, absl::string_view key,
                                  absl::string_view value) {
  return lock.FencedPersist(key, value);
}

// Deletes repository key `key` and its subtree (as Repository::Delete: ephemeral keys of this
// instance among them are not re-created after a session loss) iff this instance holds `lock`,
// as one store transaction. Errors as PersistIfHeld.
inline absl::Status DeleteIfHeld(DistributedLock& lock, absl::string_view key) {
  return lock.FencedDelete(key);
}

}  // namespace registry::lock

#endif  // LOCK_DISTRIBUTED_LOCK_H_
