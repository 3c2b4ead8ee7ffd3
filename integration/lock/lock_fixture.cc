// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_fixture.cc
#include "integration/lock/lock_fixture.h"

#include <algorithm>
#include <utility>

#include "lock/two_tier_lock.h"

namespace registry::lock::testing {

ConsulRepositoryOptions LockTest::RepositoryOptions() {
  ConsulRepositoryOptions options;
  options.client = ClientOptionsForCodeUnderTest();
  options.client.request_timeout = absl::Seconds(5);
  options.namespace_name = "locks";
  options.session_ttl = absl::Seconds(1);
  options.session_lock_delay = kLockDelay;
  options.lock_retry = absl::Milliseconds(50);
  options.block_query_wait = absl::Seconds(5);
  return options;
}

std::unique_ptr<ConsulRepository> LockTest::NewRepository() {
  return NewRepository(RepositoryOptions());
}

std::unique_ptr<ConsulRepository> LockTest::NewRepository(const ConsulRepositoryOptions& options) {
  absl::StatusOr<ConsulInstance> instance = NewConsulInstance(options);
  EXPECT_TRUE(instance.ok()) << instance.status();
  if (!instance.ok()) return nullptr;
  instances_.erase(instance->repository.get());  // an address reused after a repository went
  instances_.emplace(instance->repository.get(), instance->locks);
  return std::move(instance->repository);
}

std::unique_ptr<LockManager> LockTest::NewManager(ConsulRepository& repository,
                                                  LockManagerOptions options) {
  auto it = instances_.find(&repository);
  if (it == instances_.end()) {
    ADD_FAILURE() << "NewManager: the repository was not made by NewRepository()";
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<LockManager>> manager =
      LockManager::Create(it->second, std::move(options));
  EXPECT_TRUE(manager.ok()) << manager.status();
  return manager.ok() ? *std::move(manager) : nullptr;
}

std::shared_ptr<DistributedLock> LockTest::GetLock(LockManager& manager, const std::string& name) {
  absl::StatusOr<std::shared_ptr<DistributedLock>> lock = manager.GetLock(name);
  EXPECT_TRUE(lock.ok()) << lock.status();
  return lock.ok() ? *lock : nullptr;
}

std::string LockTest::HolderOf(const DistributedLock& lock) {
  return KeySession(TwoTierOf(lock).consul_key()).value_or("");
}

absl::Duration LockTest::SlowestRoundTrip() {
  absl::Duration slowest = absl::ZeroDuration();
  for (int i = 0; i < 20; ++i) {
    const absl::Time start = absl::Now();
    EXPECT_TRUE(raw().KvGet("locks/round-trip").ok());
    slowest = std::max(slowest, absl::Now() - start);
  }
  return slowest;
}

uint64_t LockTest::Requests(const std::string& endpoint) {
  const std::map<std::string, uint64_t> counts = server().RequestCounts();
  auto it = counts.find(endpoint);
  return it == counts.end() ? 0 : it->second;
}

DistributedLock::LostListener LossRecorder::Listener() {
  return [this](const std::string& name, const absl::Status& reason) {
    absl::MutexLock lock(&mu_);
    reasons_.push_back(std::string(reason.message()));
  };
}

bool LossRecorder::AwaitCount(size_t count, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto reached = [this, count]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reasons_.size() >= count; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

std::vector<std::string> LossRecorder::reasons() {
  absl::MutexLock lock(&mu_);
  return reasons_;
}

}  // namespace registry::lock::testing
