// plugin/consul_locks.cc
#include "plugin/consul_locks.h"

#include <utility>

#include "lock/consul_semaphore.h"
#include "lock/lock_manager.h"

namespace registry::plugin {
namespace {

// The C ABI promises hosts the semaphore limits the lock layer takes.
static_assert(REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX == lock::kMaxSemaphoreLimit);

// The getters of the C ABI, each one of the manager's: the locks it hands out are served as they
// are.
class ConsulLockService final : public LockService {
 public:
  explicit ConsulLockService(std::unique_ptr<lock::LockManager> manager)
      : manager_(std::move(manager)) {}

  absl::StatusOr<std::shared_ptr<lock::DistributedLock>> GetLock(absl::string_view name) override {
    return manager_->GetLock(name);
  }

  absl::StatusOr<std::shared_ptr<lock::DistributedLock>> GetFairLock(
      absl::string_view name) override {
    return manager_->GetFairLock(name);
  }

  absl::StatusOr<std::shared_ptr<lock::DistributedLock>> GetSemaphore(absl::string_view name,
                                                                      int limit) override {
    return manager_->GetSemaphore(name, limit);
  }

  absl::StatusOr<std::shared_ptr<lock::DistributedLock>> GetReadWriteLock(absl::string_view name,
                                                                          bool write) override {
    return write ? manager_->GetWriteLock(name) : manager_->GetReadLock(name);
  }

 private:
  const std::unique_ptr<lock::LockManager> manager_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LockService>> NewConsulLockService(ConsulRepository& repository) {
  absl::StatusOr<std::unique_ptr<lock::LockManager>> manager = lock::NewLockManager(repository);
  if (!manager.ok()) return manager.status();
  return std::make_unique<ConsulLockService>(*std::move(manager));
}

}  // namespace registry::plugin
