// SPDX-License-Identifier: Apache-2.0
// lock/lock_kind.cc
#include "lock/lock_kind.h"

#include "lock/consul_fair_lock.h"
#include "lock/consul_mutex.h"
#include "lock/consul_rw_lock.h"
#include "lock/consul_semaphore.h"
#include "lock/lock_core.h"
#include "lock/lock_name.h"

namespace registry::lock {
namespace {

std::unique_ptr<RemoteLock> NewMutex(LockCore& core, const std::string& canonical, int) {
  return std::make_unique<ConsulMutex>(core, canonical, LockConsulKey(core.key_space(), canonical));
}

std::unique_ptr<RemoteLock> NewFairLock(LockCore& core, const std::string& canonical, int) {
  return std::make_unique<ConsulFairLock>(core, canonical,
                                          FairLockOwnerKey(core.key_space(), canonical),
                                          FairLockQueuePrefix(core.key_space(), canonical));
}

std::unique_ptr<RemoteLock> NewSemaphore(LockCore& core, const std::string& canonical, int limit) {
  return std::make_unique<ConsulSemaphore>(core, canonical,
                                           SemaphorePrefix(core.key_space(), canonical), limit);
}

std::unique_ptr<RemoteLock> NewReadSide(LockCore& core, const std::string& canonical, int) {
  return std::make_unique<ConsulRwLock>(core, canonical, RwLockPrefix(core.key_space(), canonical),
                                        false);
}

std::unique_ptr<RemoteLock> NewWriteSide(LockCore& core, const std::string& canonical, int) {
  return std::make_unique<ConsulRwLock>(core, canonical, RwLockPrefix(core.key_space(), canonical),
                                        true);
}

// In LockKind order. The metrics labels are exported names: operators alert on them, and
// docs/operations.md lists them.
constexpr LockKindTraits kTraits[kLockKindCount] = {
    {LockKind::kMutex, "GetLock", "lock", "mutex", LockCapacity::kOne, LockKind::kMutex, &NewMutex},
    {LockKind::kFair, "GetFairLock", "lock", "fair", LockCapacity::kOne, LockKind::kFair,
     &NewFairLock},
    {LockKind::kSemaphore, "GetSemaphore", "semaphore", "semaphore", LockCapacity::kLimit,
     LockKind::kSemaphore, &NewSemaphore},
    {LockKind::kRead, "GetReadLock", "read lock", "read", LockCapacity::kAny, LockKind::kWrite,
     &NewReadSide},
    {LockKind::kWrite, "GetWriteLock", "write lock", "write", LockCapacity::kOne, LockKind::kRead,
     &NewWriteSide},
};

constexpr bool EveryKindAtItsIndex() {
  for (size_t i = 0; i < kLockKindCount; ++i) {
    if (static_cast<size_t>(kTraits[i].kind) != i) return false;
  }
  return true;
}
static_assert(EveryKindAtItsIndex(), "kTraits must list the kinds in LockKind order");

}  // namespace

const LockKindTraits& TraitsOf(LockKind kind) { return kTraits[static_cast<size_t>(kind)]; }

std::vector<std::string> LockKindLabels() {
  std::vector<std::string> labels;
  for (const LockKindTraits& traits : kTraits) labels.push_back(traits.metrics_label);
  return labels;
}

}  // namespace registry::lock
