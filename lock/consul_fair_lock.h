// lock/consul_fair_lock.h
//
// ConsulFairLock is the tier 2 of a fair (FIFO) lock (remote_lock.h). Contenders queue under the
// lock's prefix: each attempt registers an entry key of its own, bound to the instance session
// (so a dead contender's entry goes with its session), and reads the queue in the same
// transaction. The queue's order is the order in which Consul created the entries (CreateIndex);
// the first entry owns the lock. Every other contender blocks on its predecessor's entry only,
// so one release wakes exactly one remote waiter; a waiter whose predecessor vanished re-reads
// the queue. The hold is fenced by the owner's entry at its ModifyIndex.
//
// Entry keys are never reused: each names the session and a random number, so a delayed delete
// of one hold's entry cannot touch a later hold's. Unlike the mutex's key, an entry is new to
// Consul, so no lock-delay applies to it: after a holder's session ends, the next contender owns
// the lock as soon as Consul has deleted the entry. Key layout: lock/README.md.
//
// Uncontended, a Lock() + Unlock() costs two requests: the registration (a txn `lock` of the
// entry + `get-tree` of the queue) and the release (a txn `delete`).
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
#include "lock/lock_core.h"
#include "lock/remote_lock.h"

namespace registry::lock {

// The queue under `prefix` as `listed` shows it: the entries directly under it (one segment
// ending with '/', so nothing a repository key or a deeper lock name maps to) that are bound to
// a session, in the order Consul created them.
std::vector<consul::DirEntry> FairQueue(absl::string_view prefix,
                                        const std::vector<consul::DirEntry>& listed);

class ConsulFairLock final : public RemoteLock {
 public:
  // The fair lock called `name` (canonical, for errors) queueing under Consul prefix `prefix`
  // (ending with '/'); `core` must outlive it.
  ConsulFairLock(LockCore& core, std::string name, std::string prefix);

  const std::string& consul_key() const override { return prefix_; }
  absl::StatusOr<std::optional<RemoteHold>> Acquire(absl::Time deadline,
                                                    absl::Time request_deadline,
                                                    absl::string_view op,
                                                    std::string* pending_release) override;
  absl::Status Release(const RemoteHold& hold) override;
  // `pending` is the entry key the call registered.
  void ReleasePending(const std::string& pending) override;

 private:
  LockCore& core_;
  const std::string name_;
  const std::string prefix_;
};

}  // namespace registry::lock

#endif  // LOCK_CONSUL_FAIR_LOCK_H_
