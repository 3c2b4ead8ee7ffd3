// SPDX-License-Identifier: Apache-2.0
// lock/consul_mutex.h
//
// ConsulMutex is the tier 2 of DistributedLock (remote_lock.h): one Consul key per lock, taken
// with a txn `lock` by the instance session (the answer's ModifyIndex fences the hold). While
// another session holds the key, the acquire blocks on it with blocking reads; a key that is free
// yet refused (lock-delay) is retried every lock_retry. Requests failing with transient errors
// are retried with back-off for at most max_unreachable. See lock/README.md for the key layout.
//
// Thread safety: as RemoteLock.
#ifndef LOCK_CONSUL_MUTEX_H_
#define LOCK_CONSUL_MUTEX_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lock/acquire_loop.h"
#include "lock/key_acquisition.h"
#include "lock/lock_core.h"
#include "lock/remote_lock.h"

namespace registry::lock {

class ConsulMutex final : public RemoteLock {
 public:
  // The mutex called `name` (canonical, for errors) on Consul key `key`; `core` must outlive it.
  ConsulMutex(LockCore& core, std::string name, std::string key);

  const std::string& consul_key() const override { return key_; }
  absl::StatusOr<std::optional<RemoteHold>> Acquire(absl::Time deadline,
                                                    absl::Time request_deadline,
                                                    absl::string_view op,
                                                    PendingRelease* pending_release) override;
  absl::Status Release(const RemoteHold& hold) override;
  // `pending.session` is the session of an acquire whose answer was lost.
  void ReleasePending(const PendingRelease& pending) override;

 private:
  // One fenced release: true if it released the key, false if the key was not at hold.index.
  absl::StatusOr<bool> FencedRelease(const RemoteHold& hold);
  // `status` prefixed with "<op>: lock '<name>'".
  absl::Status Prefixed(absl::string_view op, const absl::Status& status) const;

  LockCore& core_;
  const std::string name_;
  const std::string key_;
};

}  // namespace registry::lock

#endif  // LOCK_CONSUL_MUTEX_H_
