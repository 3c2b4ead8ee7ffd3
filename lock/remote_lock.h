// SPDX-License-Identifier: Apache-2.0
// lock/remote_lock.h
//
// RemoteLock is tier 2 of a two-tier lock (internal to lock/): the Consul side of one lock,
// driven only by the thread that owns the lock's tier 1 (TwoTierLock, two_tier_lock.h), which
// is written once over this interface. Each Consul recipe implements it: the mutex
// (consul_mutex.h), the fair lock (consul_fair_lock.h) and the semaphore (consul_semaphore.h).
//
// A hold is fenced: it is named by the instance session, the recipe's fence key of the hold, and
// that key's ModifyIndex at the acquisition. A release, a resent release or a fenced write checks
// that index, so it never acts on a later hold of the same process (fenced_write.cc).
//
// Thread safety: called only by threads holding a slot of tier 1 (ReleasePending from the task
// that keeps one reserved): one call at a time for a lock, which has one slot; a recipe behind a
// lock of more slots (the semaphore) takes concurrent calls. The object must not outlive the
// LockCore it uses.
#ifndef LOCK_REMOTE_LOCK_H_
#define LOCK_REMOTE_LOCK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::lock {

// A hold in Consul: the session, the key that fences the hold (the mutex's key, the fair lock's
// owner key, the semaphore holder's entry), and its ModifyIndex at the acquisition. Every hold of
// the process uses the instance session; the index tells them apart (the key's ModifyIndex changes
// with every acquisition and release, and with nothing else while it is held). The lock monitor
// follows the key while the lock is held. `entry` is a recipe's own key of the hold besides it (the
// fair lock's queue entry), or "".
struct RemoteHold {
  std::string session;
  std::string key;
  uint64_t index = 0;
  std::string entry = "";
};

// What an Acquire whose answer was lost may have left bound to the instance session, for the
// caller to have released (RemoteLock::ReleasePending). `session`: an acquire of the recipe's lock
// key (the mutex's key, the fair lock's owner key) with this session may have been applied; ""
// when none was sent. `entry`: a key of the recipe's own that the call may have created (the fair
// lock's queue entry, a holder's entry of a record lock), "" when none.
struct PendingRelease {
  std::string session = "";
  std::string entry = "";

  // True when nothing is pending.
  bool empty() const { return session.empty() && entry.empty(); }
};

class RemoteLock {
 public:
  virtual ~RemoteLock() = default;

  // Where the lock lives in Consul: the mutex's key, the fair lock's owner key, the
  // semaphore's holders record.
  virtual const std::string& consul_key() const = 0;

  // Acquires the lock in Consul: the hold, or nullopt when `deadline` passed first (nothing is
  // then held by this call). Requests are cut at `request_deadline`; `op` names the call in
  // errors. When it returns without a hold and `*pending_release` is not empty, a write of the call
  // whose outcome is unknown (its answer was lost) may have left Consul state bound to the
  // session: the caller must have it released (ReleasePending) before tier 1 is given to
  // anyone. Errors: the manager's closed status; Unavailable once Consul was unreachable for
  // longer than max_unreachable; any other error naming `op`.
  virtual absl::StatusOr<std::optional<RemoteHold>> Acquire(absl::Time deadline,
                                                            absl::Time request_deadline,
                                                            absl::string_view op,
                                                            PendingRelease* pending_release) = 0;

  // Releases `hold` (fenced), retrying an unreachable Consul for at most max_unreachable. OK
  // also when the hold was no longer in Consul (lost, or its session gone).
  virtual absl::Status Release(const RemoteHold& hold) = 0;

  // Best-effort release of what an Acquire left pending (`pending`, as it set it).
  virtual void ReleasePending(const PendingRelease& pending) = 0;

  // Best-effort clean-up after `hold` was lost (it is not released): what the recipe keeps in
  // Consul for a hold besides the fence key. Nothing by default.
  virtual void ForgetLostHold(const RemoteHold& hold) {}
};

}  // namespace registry::lock

#endif  // LOCK_REMOTE_LOCK_H_
