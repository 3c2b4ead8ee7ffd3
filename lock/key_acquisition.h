// SPDX-License-Identifier: Apache-2.0
// lock/key_acquisition.h
//
// KeyAcquisition is one Acquire of a single Consul lock key (internal to lock/): a txn `lock` of
// the key with the instance session, whose answer's ModifyIndex fences the hold; while another
// session holds the key, blocking reads of it; a key that is free yet refused (lock-delay) is
// retried every lock_retry, never waited on with a blocking read. The mutex is this alone
// (consul_mutex.h); the fair lock takes its owner key this way once it heads the queue
// (consul_fair_lock.h).
//
// Thread safety: as AcquireLoop.
#ifndef LOCK_KEY_ACQUISITION_H_
#define LOCK_KEY_ACQUISITION_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "consul/canceller.h"
#include "consul/kv.h"
#include "lock/acquire_loop.h"
#include "lock/lock_core.h"

namespace registry::lock {

class KeyAcquisition : public AcquireLoop {
 public:
  // An Acquire of Consul key `key` (see AcquireLoop for the other arguments).
  KeyAcquisition(LockCore& core, const std::string& name, const std::string& key,
                 absl::Time deadline, absl::Time request_deadline, absl::string_view op,
                 PendingRelease* pending_release)
      : AcquireLoop(core, name, deadline, request_deadline, op, pending_release), key_(key) {}

 protected:
  std::optional<AcquireResult> Round(absl::Time now) override;

  // What the caller must release (RemoteLock::ReleasePending) if the call ends now: after an
  // acquire with `session` that may have been applied unseen, and when none was. The mutex's:
  // the session, and nothing.
  virtual PendingRelease PendingAfterUnknownAcquire(const std::string& session) {
    return {.session = session};
  }
  virtual PendingRelease PendingWithoutUnknownAcquire() { return {}; }

 private:
  // Another session holds the key: block until it changes or the time is up.
  std::optional<AcquireResult> WaitWhileHeld(absl::Time now);
  // An acquire with the instance session, then a look at the key if it was refused.
  std::optional<AcquireResult> TryOnce(absl::Time now);
  // Refused: held by another session (wait for a change) or under lock-delay (retry later).
  std::optional<AcquireResult> LookAfterRefusal(const std::string& session,
                                                consul::Canceller* canceller);

  const std::string& key_;
  bool quick_retry_ = true;  // a key seen free after a refused acquire is retried once at once
  std::optional<consul::KvGetResult> held_;  // last read, while another session holds the key
};

}  // namespace registry::lock

#endif  // LOCK_KEY_ACQUISITION_H_
