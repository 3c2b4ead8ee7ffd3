// SPDX-License-Identifier: Apache-2.0
// tests/plugin/lock_test.cc
//
// Locks across the C ABI (1.2), end to end through a real dlopen of the in-memory test plugin
// (memory_locks.h): re-entrancy per thread, timeouts, loss and its listeners, fenced writes,
// close, and handle lifetimes.
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "integration/testing/eventually.h"
#include "tests/plugin/memory_plugin_test.h"

namespace registry::plugin {
namespace {

using ::testing::HasSubstr;

using ::registry::testing::kPatience;

class PluginLockTest : public MemoryPluginTest {
 protected:
  void SetUp() override {
    MemoryPluginTest::SetUp();
    if (HasFatalFailure()) return;
    lock_ = GetLock("schema/db");
  }

  std::unique_ptr<PluginLock> GetLock(const std::string& name) {
    absl::StatusOr<std::unique_ptr<PluginLock>> lock = repository_->GetLock(name);
    EXPECT_TRUE(lock.ok()) << lock.status();
    return lock.ok() ? std::move(*lock) : nullptr;
  }

  // Runs TryLock(timeout) on another thread and returns its result.
  absl::StatusOr<bool> TryLockElsewhere(PluginLock& lock, absl::Duration timeout) {
    absl::StatusOr<bool> result = false;
    std::thread other([&] {
      result = lock.TryLock(timeout);
      if (result.ok() && *result) (void)lock.Unlock();
    });
    other.join();
    return result;
  }

  std::unique_ptr<PluginLock> lock_;
};

TEST_F(PluginLockTest, LockIsReentrantPerThreadAndNeedsAsManyUnlocks) {
  ASSERT_NE(lock_, nullptr);
  ASSERT_TRUE(lock_->Lock().ok());
  ASSERT_TRUE(lock_->Lock().ok());
  EXPECT_TRUE(*lock_->IsHeldByCurrentThread());
  ASSERT_TRUE(lock_->Unlock().ok());
  EXPECT_TRUE(*lock_->IsHeldByCurrentThread());
  EXPECT_FALSE(*TryLockElsewhere(*lock_, absl::ZeroDuration())) << "still held once";
  ASSERT_TRUE(lock_->Unlock().ok());
  EXPECT_FALSE(*lock_->IsHeldByCurrentThread());
  EXPECT_TRUE(*TryLockElsewhere(*lock_, absl::ZeroDuration()));
}

TEST_F(PluginLockTest, TryLockGivesUpAfterItsTimeoutAndNeverBefore) {
  ASSERT_NE(lock_, nullptr);
  ASSERT_TRUE(lock_->Lock().ok());
  const absl::Duration timeout = absl::Milliseconds(150);
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> acquired = TryLockElsewhere(*lock_, timeout);
  const absl::Duration waited = absl::Now() - start;
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  EXPECT_GE(waited, timeout);
  ASSERT_TRUE(lock_->Unlock().ok());
}

TEST_F(PluginLockTest, HandlesForOneNameShareTheLock) {
  std::unique_ptr<PluginLock> same = GetLock("/schema/db");  // a leading '/' is ignored
  ASSERT_NE(lock_, nullptr);
  ASSERT_NE(same, nullptr);
  ASSERT_TRUE(lock_->Lock().ok());
  EXPECT_TRUE(*same->IsHeldByCurrentThread());
  EXPECT_FALSE(*TryLockElsewhere(*same, absl::ZeroDuration()));
  ASSERT_TRUE(same->Unlock().ok());
  EXPECT_FALSE(*lock_->IsHeldByCurrentThread());
}

TEST_F(PluginLockTest, UnlockByAThreadThatDoesNotHoldTheLockIsFailedPrecondition) {
  ASSERT_NE(lock_, nullptr);
  EXPECT_EQ(lock_->Unlock().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(lock_->Lock().ok());
  absl::Status other_unlock;
  std::thread other([&] { other_unlock = lock_->Unlock(); });
  other.join();
  EXPECT_EQ(other_unlock.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(*lock_->IsHeldByCurrentThread());
  ASSERT_TRUE(lock_->Unlock().ok());
}

TEST_F(PluginLockTest, LostHoldIsReportedToListenersAndByIsLost) {
  ASSERT_NE(lock_, nullptr);
  absl::Notification told;
  std::string name;
  absl::Status reason;
  absl::StatusOr<int64_t> id = lock_->AddLostListener([&](const std::string& n, absl::Status r) {
    name = n;
    reason = r;
    told.Notify();
  });
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(lock_->Lock().ok());
  EXPECT_FALSE(*lock_->IsLost());
  ASSERT_TRUE(repository_->Persist("/test/lose_lock", "schema/db").ok());
  ASSERT_TRUE(told.WaitForNotificationWithTimeout(kPatience));
  EXPECT_EQ(name, "schema/db");
  EXPECT_EQ(reason.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reason.message(), HasSubstr("expired"));
  EXPECT_TRUE(*lock_->IsLost());
  EXPECT_EQ(lock_->Lock().code(), absl::StatusCode::kAborted) << "re-entry into a lost hold";
  EXPECT_TRUE(lock_->Unlock().ok()) << "a lost hold still ends locally";
}

TEST_F(PluginLockTest, RemovedLostListenerIsNotCalled) {
  ASSERT_NE(lock_, nullptr);
  absl::Notification kept_told;
  int removed_calls = 0;
  absl::StatusOr<int64_t> removed =
      lock_->AddLostListener([&](const std::string&, absl::Status) { ++removed_calls; });
  absl::StatusOr<int64_t> kept =
      lock_->AddLostListener([&](const std::string&, absl::Status) { kept_told.Notify(); });
  ASSERT_TRUE(removed.ok() && kept.ok());
  lock_->RemoveLostListener(*removed);
  ASSERT_TRUE(lock_->Lock().ok());
  ASSERT_TRUE(repository_->Persist("/test/lose_lock", "schema/db").ok());
  ASSERT_TRUE(kept_told.WaitForNotificationWithTimeout(kPatience));
  EXPECT_EQ(removed_calls, 0);  // listeners run in order, one at a time
  ASSERT_TRUE(lock_->Unlock().ok());
}

TEST_F(PluginLockTest, FencedWritesSucceedOnlyWhileTheCallingThreadHoldsTheLock) {
  ASSERT_NE(lock_, nullptr);
  absl::Status unheld = lock_->PersistIfHeld("/fenced", "x");
  EXPECT_EQ(unheld.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(unheld.message(), HasSubstr("/fenced"));
  ASSERT_TRUE(lock_->Lock().ok());
  ASSERT_TRUE(lock_->PersistIfHeld("/fenced", "v").ok());
  EXPECT_EQ(**repository_->Get("/fenced"), "v");
  ASSERT_TRUE(lock_->DeleteIfHeld("/fenced").ok());
  EXPECT_FALSE(repository_->Get("/fenced")->has_value());
  ASSERT_TRUE(repository_->Persist("/test/lose_lock", "schema/db").ok());
  EXPECT_EQ(lock_->PersistIfHeld("/fenced", "late").code(), absl::StatusCode::kAborted);
  EXPECT_FALSE(repository_->Get("/fenced")->has_value());
  ASSERT_TRUE(lock_->Unlock().ok());
}

TEST_F(PluginLockTest, CloseFailsAWaiterWithFailedPrecondition) {
  ASSERT_NE(lock_, nullptr);
  ASSERT_TRUE(lock_->Lock().ok());
  absl::Notification waiting;
  absl::Status waiter_status;
  std::thread waiter([&] {
    waiting.Notify();
    waiter_status = lock_->Lock();
  });
  waiting.WaitForNotification();
  ASSERT_TRUE(repository_->Close().ok());
  waiter.join();
  EXPECT_EQ(waiter_status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(*lock_->IsLost()) << "closing loses the hold";
}

TEST_F(PluginLockTest, LockHandleOutlivingItsRepositoryFailsWithFailedPrecondition) {
  ASSERT_NE(lock_, nullptr);
  repository_.reset();
  EXPECT_EQ(lock_->Lock().code(), absl::StatusCode::kFailedPrecondition);
  lock_.reset();  // release after destroy is allowed
}

TEST_F(PluginLockTest, InvalidNameIsInvalidArgumentNamingIt) {
  absl::StatusOr<std::unique_ptr<PluginLock>> lock = repository_->GetLock("a//b");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(lock.status().message(), HasSubstr("'a//b'"));
}

}  // namespace
}  // namespace registry::plugin
