// SPDX-License-Identifier: Apache-2.0
// lock/consul_rw_lock.h
//
// ConsulRwLock is the tier 2 of either side of a read/write lock (remote_lock.h): many readers
// or one writer across every process, writer-preferring. It is a record lock (record_lock.h):
//
//   ns/rwlock/a/b/                       the record: {"Writer":"<entry>","Readers":{...},
//                                        "Waiting":["<entry>",...]}
//   ns/rwlock/a/b/<session>.<16 hex>/    a reader's, the writer's or a waiting writer's entry
//
// - Read. A reader takes its place (its name added to "Readers") when no writer holds and no
//   writer waits; else it waits on the tree. A dead writer in the record is pruned first (under
//   its lock-delay, as the semaphore prunes); a couple of dead readers are tidied away on the way.
// - Write. A writer takes the lock ("Writer") when no reader or writer is alive and no live
//   writer waits ahead of it, pruning every dead holder first. Otherwise it registers: its
//   entry is created and its name appended to "Waiting", which holds back every reader that
//   comes after it: writers are not starved, and a writer waits only for the holders ahead of it
//   (readers may starve while writers keep coming). A waiting writer whose entry is gone (its
//   call gave up, or its session ended) is dropped from "Waiting" by the next taker: it never
//   held.
// - Release. The entry's delete (record_lock.h).
//
// Uncontended, a read or a write Lock() + Unlock() costs three requests: the read of the tree,
// the take and the delete.
//
// Thread safety: Acquire, Release and ReleasePending may be called concurrently (the read side
// is held by many threads of a process).
#ifndef LOCK_CONSUL_RW_LOCK_H_
#define LOCK_CONSUL_RW_LOCK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lock/lock_core.h"
#include "lock/record_lock.h"
#include "lock/remote_lock.h"

namespace registry::lock {

// The record of a read/write lock as stored in Consul.
struct RwRecord {
  std::string writer;                // "" when no writer holds
  std::vector<std::string> readers;  // sorted
  std::vector<std::string> waiting;  // writers, in the order they registered
};

// The record's JSON. Errors: InvalidArgument saying what is wrong with `json`.
absl::StatusOr<RwRecord> ParseRwRecord(absl::string_view json);
std::string RwRecordJson(const RwRecord& record);

class ConsulRwLock final : public RecordLock {
 public:
  // The read (`write` false) or write side of the read/write lock called `name` (canonical,
  // for errors) whose record is the Consul key `prefix` (ending with '/'); `core` must outlive
  // it.
  ConsulRwLock(LockCore& core, std::string name, std::string prefix, bool write);

  absl::StatusOr<std::optional<RemoteHold>> Acquire(absl::Time deadline,
                                                    absl::Time request_deadline,
                                                    absl::string_view op,
                                                    PendingRelease* pending_release) override;

 private:
  const bool write_;
};

}  // namespace registry::lock

#endif  // LOCK_CONSUL_RW_LOCK_H_
