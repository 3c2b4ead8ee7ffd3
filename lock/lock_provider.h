// SPDX-License-Identifier: Apache-2.0
// lock/lock_provider.h
//
// LockProvider hands out the distributed locks of one repository instance, each a
// DistributedLock (distributed_lock.h). It is the one lock interface of the project: LockManager
// (lock_manager.h) implements it over Consul, the plugin serves the C ABI's lock entries from it,
// and test plugins implement the kinds they have.
//
// Every getter returns the same object for the same canonical name (and kind) for the life of
// the provider, and makes no request. A kind a provider does not offer fails with Unimplemented
// naming the kind and the name (the default of every getter but GetLock).
//
// Thread safety: the getters may be called concurrently from any thread.
#ifndef LOCK_LOCK_PROVIDER_H_
#define LOCK_LOCK_PROVIDER_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lock/distributed_lock.h"

namespace registry::lock {

class LockProvider {
 public:
  // Fails waiters and reports held locks lost (see the implementation for what it waits for).
  virtual ~LockProvider() = default;

  // The mutex named `name`. Errors: InvalidArgument naming a bad name; FailedPrecondition once
  // the repository is closed.
  virtual absl::StatusOr<std::shared_ptr<DistributedLock>> GetLock(absl::string_view name) = 0;
  // The fair (FIFO across processes) lock named `name`. Errors as GetLock.
  virtual absl::StatusOr<std::shared_ptr<DistributedLock>> GetFairLock(absl::string_view name) {
    return absl::UnimplementedError(
        absl::StrCat("this lock provider has no fair locks (fair lock '", name, "')"));
  }
  // The semaphore named `name` with `limit` permits. Errors as GetLock; InvalidArgument naming a
  // limit out of range; FailedPrecondition if the provider has it with another limit.
  virtual absl::StatusOr<std::shared_ptr<DistributedLock>> GetSemaphore(absl::string_view name,
                                                                        int limit) {
    return absl::UnimplementedError(absl::StrCat(
        "this lock provider has no semaphores (semaphore '", name, "', limit ", limit, ")"));
  }
  // The read side and the write side of the read/write lock named `name`. Errors as GetLock.
  virtual absl::StatusOr<std::shared_ptr<DistributedLock>> GetReadLock(absl::string_view name) {
    return absl::UnimplementedError(
        absl::StrCat("this lock provider has no read/write locks (read lock '", name, "')"));
  }
  virtual absl::StatusOr<std::shared_ptr<DistributedLock>> GetWriteLock(absl::string_view name) {
    return absl::UnimplementedError(
        absl::StrCat("this lock provider has no read/write locks (write lock '", name, "')"));
  }
};

}  // namespace registry::lock

#endif  // LOCK_LOCK_PROVIDER_H_
