// SPDX-License-Identifier: Apache-2.0
// lock/consul_semaphore.h
//
// ConsulSemaphore is the tier 2 of a semaphore (remote_lock.h): at most `limit` holders across
// every process, each named by a contender entry of its own. It follows Consul's semaphore
// recipe (the Go api's) with what a lock needs besides; the rounds, prunes and release are a
// record lock's (record_lock.h):
//
//   ns/semaphore/a/b/                          the holders record: {"Limit":3,"Holders":{...}}
//   ns/semaphore/a/b/<session>.<16 hex>/       a holder's entry, bound to its instance session
//
// - Take. With fewer than `limit` holders alive, the txn locks the caller's new entry and adds
//   its name to "Holders"; it prunes as many dead holders (under their lock-delay, as
//   record_lock.h says) as the caller's place needs.
// - Wait. With `limit` holders alive, on the tree's index.
// - Limit. The record's limit is the semaphore's. A caller asking for another gets
//   FailedPrecondition naming both, unless no holder is alive: then the record takes the new one.
//
// Uncontended, an acquire + release costs three requests: the read, the take txn and the delete.
//
// Thread safety: Acquire, Release and ReleasePending may be called concurrently (a semaphore is
// held by up to `limit` threads of a process).
#ifndef LOCK_CONSUL_SEMAPHORE_H_
#define LOCK_CONSUL_SEMAPHORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lock/lock_core.h"
#include "lock/record_lock.h"
#include "lock/remote_lock.h"

namespace registry::lock {

// The largest limit a semaphore may have: its record names every holder and must stay well
// below Consul's value size limit.
inline constexpr int kMaxSemaphoreLimit = 1024;

// The holders record of a semaphore as stored in Consul.
struct SemaphoreRecord {
  int limit = 0;
  std::vector<std::string> holders;  // entry names (the segment below the prefix), sorted
};

// The record's JSON. Errors: InvalidArgument saying what is wrong with `json`.
absl::StatusOr<SemaphoreRecord> ParseSemaphoreRecord(absl::string_view json);
std::string SemaphoreRecordJson(const SemaphoreRecord& record);

class ConsulSemaphore final : public RecordLock {
 public:
  // The semaphore called `name` (canonical, for errors) of at most `limit` holders, whose
  // record is the Consul key `prefix` (ending with '/'); `core` must outlive it.
  ConsulSemaphore(LockCore& core, std::string name, std::string prefix, int limit);

  absl::StatusOr<std::optional<RemoteHold>> Acquire(absl::Time deadline,
                                                    absl::Time request_deadline,
                                                    absl::string_view op,
                                                    PendingRelease* pending_release) override;

 private:
  const int limit_;
};

}  // namespace registry::lock

#endif  // LOCK_CONSUL_SEMAPHORE_H_
