// SPDX-License-Identifier: Apache-2.0
// lock/lock_kind.h
//
// The kinds of lock a LockManager hands out, and everything that tells them apart, in one table
// (internal to lock/): the getter that names a call in errors, what errors call one lock, the
// value of the lock metrics' label `kind`, how many threads hold one at once, the other side of
// a read/write lock, and the Consul recipe behind it (its tier 2). Code that treats kinds
// differently reads the table; nothing switches on LockKind.
//
// Thread safety: the table is constant.
#ifndef LOCK_LOCK_KIND_H_
#define LOCK_LOCK_KIND_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace registry::lock {

class LockCore;
class RemoteLock;

// The Consul recipe behind a DistributedLock. The order is the table's (lock_kind.cc) and the
// order of the metrics' `kind` label values.
enum class LockKind {
  kMutex,      // consul_mutex.h
  kFair,       // consul_fair_lock.h
  kSemaphore,  // consul_semaphore.h
  kRead,       // the two sides of a read/write lock: consul_rw_lock.h
  kWrite,
};
inline constexpr size_t kLockKindCount = 5;

// How many threads (across every process) may hold one lock of a kind at once.
enum class LockCapacity {
  kOne,    // a lock
  kLimit,  // the semaphore's limit, given to its getter
  kAny,    // the read side of a read/write lock: any number
};

// The tier 2 of lock `canonical` of `core`; `limit` is the getter's (a semaphore's permits).
using RemoteFactory = std::unique_ptr<RemoteLock> (*)(LockCore& core, const std::string& canonical,
                                                      int limit);

struct LockKindTraits {
  LockKind kind;
  const char* getter;         // LockManager's getter, naming calls in errors: "GetFairLock"
  const char* noun;           // what errors call one lock of the kind: "semaphore", "read lock"
  const char* metrics_label;  // the lock metrics' `kind` label value: "fair"
  LockCapacity capacity;
  // The other side of a read/write lock, made together with it; the kind itself for the others.
  LockKind other_side;
  RemoteFactory new_remote;
};

// The entry of `kind`.
const LockKindTraits& TraitsOf(LockKind kind);

// The `kind` label values of the lock metrics, in LockKind order (index = the kind's value).
std::vector<std::string> LockKindLabels();

}  // namespace registry::lock

#endif  // LOCK_LOCK_KIND_H_
