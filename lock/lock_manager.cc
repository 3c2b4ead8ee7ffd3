// SPDX-License-Identifier: Apache-2.0
// lock/lock_manager.cc
#include "lock/lock_manager.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lock/lock_core.h"

namespace registry::lock {
namespace {

constexpr size_t kMaxHolderValueBytes = 4096;

}  // namespace

absl::Status ValidateLockManagerOptions(const LockManagerOptions& options) {
  if (options.max_unreachable < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LockManagerOptions.max_unreachable = ", absl::FormatDuration(options.max_unreachable),
        ": must not be negative"));
  }
  if (options.monitor_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LockManagerOptions.monitor_delay = ", absl::FormatDuration(options.monitor_delay),
        ": must not be negative"));
  }
  if (options.holder_value.size() > kMaxHolderValueBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("LockManagerOptions.holder_value: ", options.holder_value.size(),
                     " bytes, at most ", kMaxHolderValueBytes, " allowed"));
  }
  return absl::OkStatus();
}

LockManager::LockManager(std::shared_ptr<LockCore> core) : core_(std::move(core)) {}

LockManager::~LockManager() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<LockManager>> LockManager::Create(const LockManagerParts& parts,
                                                                 LockManagerOptions options) {
  if (absl::Status status = ValidateLockManagerOptions(options); !status.ok()) return status;
  absl::StatusOr<std::shared_ptr<LockCore>> core = LockCore::Create(parts, std::move(options));
  if (!core.ok()) return core.status();
  return std::unique_ptr<LockManager>(new LockManager(*std::move(core)));
}

absl::StatusOr<std::shared_ptr<DistributedLock>> LockManager::GetLock(absl::string_view name) {
  return core_->GetLock(name, LockKind::kMutex);
}

absl::StatusOr<std::shared_ptr<DistributedLock>> LockManager::GetFairLock(absl::string_view name) {
  return core_->GetLock(name, LockKind::kFair);
}

absl::StatusOr<std::shared_ptr<DistributedLock>> LockManager::GetSemaphore(absl::string_view name,
                                                                           int limit) {
  return core_->GetLock(name, LockKind::kSemaphore, limit);
}

absl::StatusOr<std::shared_ptr<DistributedLock>> LockManager::GetReadLock(absl::string_view name) {
  return core_->GetLock(name, LockKind::kRead);
}

absl::StatusOr<std::shared_ptr<DistributedLock>> LockManager::GetWriteLock(absl::string_view name) {
  return core_->GetLock(name, LockKind::kWrite);
}

}  // namespace registry::lock
