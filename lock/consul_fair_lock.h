// SPDX-License-Identifier: Apache-2.0
// lock/consul_fair_lock.h
//
// ConsulFairLock is the tier 2 of a fair (FIFO) lock (remote_lock.h). Contenders queue: each
// attempt registers an entry key of its own under the lock's queue prefix, bound to the instance
// session (so a dead contender's entry goes with its session), and reads the queue in the same
// transaction. The queue's order is the order in which Consul created the entries (CreateIndex).
// Every contender but the first blocks on its predecessor's entry only, so one release wakes
// exactly one remote waiter; a waiter whose predecessor vanished re-reads the queue.
//
// The head of the queue then takes the lock's owner key as the mutex takes its key
// (key_acquisition.h), and the hold is fenced by the owner key's ModifyIndex. The owner key is
// what makes the lock safe: when a holder's session ends, Consul's lock-delay keeps the next
// head from taking the owner key for that long, giving a holder that lost its session time to
// learn it (its entry, by contrast, is new to Consul and would get no lock-delay). Normally the
// owner key is free when the head asks for it, so the queue, not the key, orders the contenders.
//
// Entry keys are never reused: each names the session and a random number, so a late delete of
// one hold's entry cannot touch a later hold's. Key layout: lock_name.h and lock/README.md.
//
// Uncontended, a Lock() + Unlock() costs three requests: the registration (a txn `lock` of the
// entry + `get-tree` of the queue), the owner key's `lock`, and the release (one txn: check-index
// + `unlock` of the owner key, `delete` of the entry).
//
// Thread safety: as RemoteLock.
#ifndef LOCK_CONSUL_FAIR_LOCK_H_
#define LOCK_CONSUL_FAIR_LOCK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "consul/kv.h"
#include "lock/consul_mutex.h"
#include "lock/lock_core.h"
#include "lock/remote_lock.h"

namespace registry::lock {

// The queue under `prefix` as `listed` shows it: the entries directly under it (one segment
// ending with '/', so nothing a deeper lock name's queue holds) that are bound to a session, in
// the order Consul created them.
std::vector<consul::DirEntry> FairQueue(absl::string_view prefix,
                                        const std::vector<consul::DirEntry>& listed);

class ConsulFairLock final : public RemoteLock {
 public:
  // The fair lock called `name` (canonical, for errors) with owner key `owner_key`, queueing
  // under Consul prefix `queue` (ending with '/'); `core` must outlive it.
  ConsulFairLock(LockCore& core, std::string name, std::string owner_key, std::string queue);

  const std::string& consul_key() const override { return owner_.consul_key(); }
  absl::StatusOr<std::optional<RemoteHold>> Acquire(absl::Time deadline,
                                                    absl::Time request_deadline,
                                                    absl::string_view op,
                                                    PendingRelease* pending_release) override;
  absl::Status Release(const RemoteHold& hold) override;
  // `pending` names the call's entry and the session of its last owner key attempt.
  void ReleasePending(const PendingRelease& pending) override;
  // Deletes the entry of a lost hold, which would otherwise keep its successor waiting.
  void ForgetLostHold(const RemoteHold& hold) override;

 private:
  LockCore& core_;
  const std::string name_;
  const std::string queue_;
  ConsulMutex owner_;  // the owner key, taken by the head of the queue
};

}  // namespace registry::lock

#endif  // LOCK_CONSUL_FAIR_LOCK_H_
