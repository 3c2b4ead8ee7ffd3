// plugin/consul_locks.cc
#include "plugin/consul_locks.h"

#include <string>
#include <utility>

#include "lock/consul_semaphore.h"
#include "lock/lock_manager.h"

namespace registry::plugin {
namespace {

// The C ABI promises hosts the semaphore limits the lock layer takes.
static_assert(REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX == lock::kMaxSemaphoreLimit);

class ConsulLock final : public LockBackend {
 public:
  explicit ConsulLock(std::shared_ptr<lock::DistributedLock> lock) : lock_(std::move(lock)) {}

  const std::string& name() const override { return lock_->name(); }
  absl::Status Lock() override { return lock_->Lock(); }
  absl::StatusOr<bool> TryLock(absl::Duration timeout) override { return lock_->TryLock(timeout); }
  absl::Status Unlock() override { return lock_->Unlock(); }
  bool IsHeldByCurrentThread() const override { return lock_->IsHeldByCurrentThread(); }
  bool lost() const override { return lock_->lost(); }
  int AddLostListener(LostListener listener) override {
    return lock_->AddLostListener(std::move(listener));
  }
  void RemoveLostListener(int id) override { lock_->RemoveLostListener(id); }
  absl::Status PersistIfHeld(absl::string_view key, absl::string_view value) override {
    return lock::PersistIfHeld(*lock_, key, value);
  }
  absl::Status DeleteIfHeld(absl::string_view key) override {
    return lock::DeleteIfHeld(*lock_, key);
  }

 private:
  const std::shared_ptr<lock::DistributedLock> lock_;
};

class ConsulLockService final : public LockService {
 public:
  explicit ConsulLockService(std::unique_ptr<lock::LockManager> manager)
      : manager_(std::move(manager)) {}

  absl::StatusOr<std::shared_ptr<LockBackend>> GetLock(absl::string_view name) override {
    return Wrapped(manager_->GetLock(name));
  }

  absl::StatusOr<std::shared_ptr<LockBackend>> GetFairLock(absl::string_view name) override {
    return Wrapped(manager_->GetFairLock(name));
  }

  absl::StatusOr<std::shared_ptr<LockBackend>> GetSemaphore(absl::string_view name,
                                                            int limit) override {
    return Wrapped(manager_->GetSemaphore(name, limit));
  }

  absl::StatusOr<std::shared_ptr<LockBackend>> GetReadWriteLock(absl::string_view name,
                                                                bool write) override {
    return Wrapped(write ? manager_->GetWriteLock(name) : manager_->GetReadLock(name));
  }

 private:
  static absl::StatusOr<std::shared_ptr<LockBackend>> Wrapped(
      absl::StatusOr<std::shared_ptr<lock::DistributedLock>> lock) {
    if (!lock.ok()) return lock.status();
    return std::make_shared<ConsulLock>(*std::move(lock));
  }

  const std::unique_ptr<lock::LockManager> manager_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LockService>> NewConsulLockService(Repository& repository) {
  absl::StatusOr<std::unique_ptr<lock::LockManager>> manager = lock::NewLockManager(repository);
  if (!manager.ok()) return manager.status();
  return std::make_unique<ConsulLockService>(*std::move(manager));
}

}  // namespace registry::plugin
