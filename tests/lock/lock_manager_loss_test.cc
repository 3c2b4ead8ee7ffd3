// SPDX-License-Identifier: Apache-2.0
// tests/lock/lock_manager_loss_test.cc
//
// Request sequences of the two-tier lock (see lock_manager_test.cc) for losses, fenced writes,
// local waiters and the manager's lifetime.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lock/distributed_lock.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"
#include "tests/lock/lock_manager_fixture.h"

namespace registry::lock::testing {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Invoke;
using ::testing::Return;

TEST_F(LockManagerTest, SessionLossMarksTheHoldLostCallsListenersAndSkipsTheRelease) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Notification told;
  std::string told_name;
  lock->AddLostListener([&](const std::string& name, const absl::Status& reason) {
    told_name = name;
    told.Notify();
  });
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_FALSE(lock->lost());
  session_->Fire(InstanceSession::EventKind::kLost, "s1");
  EXPECT_TRUE(lock->lost());
  EXPECT_THAT(lock->lost_reason().message(), HasSubstr("s1"));
  ASSERT_TRUE(told.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(told_name, "a");
  absl::Status fenced = PersistIfHeld(*lock, "/meta/v", "1");  // refused without a request
  EXPECT_TRUE(absl::IsAborted(fenced)) << fenced;
  EXPECT_THAT(fenced.message(), HasSubstr("lock 'a'"));
  EXPECT_TRUE(absl::IsAborted(lock->Lock()));  // re-entry into a lost hold
  EXPECT_TRUE(lock->Unlock().ok());            // no release request: nothing to release
}

// Every hold of the process shares the instance session: a hold is told apart by the lock key's
// ModifyIndex at its acquisition, which its release and its fenced writes check.
TEST_F(LockManagerTest, ReleaseAndFencedWritesCheckTheIndexTheAcquireAnsweredWith) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  HttpRequest txn;
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsFencedWrite(), _))
      .WillOnce(Invoke([&](const HttpRequest& request, consul::Canceller*) {
        txn = request;
        return Response(200, R"({"Results":[],"Errors":null})");
      }));
  EXPECT_CALL(*transport_, Execute(IsReleaseAt("s1", kHoldIndex), _))
      .WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*lock, "/meta/v", "7").ok());
  ASSERT_TRUE(lock->Unlock().ok());
  nlohmann::json ops = nlohmann::json::parse(txn.body);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0]["KV"]["Verb"], "check-index");
  EXPECT_EQ(ops[0]["KV"]["Key"], "ns/lock/a/");
  EXPECT_EQ(ops[0]["KV"]["Index"], kHoldIndex);
  // Delete, then set: the key ends persistent even if a session held it.
  EXPECT_EQ(ops[1]["KV"]["Verb"], "delete");
  EXPECT_EQ(ops[1]["KV"]["Key"], "ns/meta/v");
  EXPECT_EQ(ops[2]["KV"]["Verb"], "set");
  EXPECT_EQ(ops[2]["KV"]["Key"], "ns/meta/v");
  EXPECT_EQ(ops[2]["KV"]["Value"], "Nw==");  // base64 of "7"
}

TEST_F(LockManagerTest, FencedWriteRefusedByConsulIsAbortedNamingTheLockAndMarksItLost) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsFencedWrite(), _))
      .WillOnce(Return(Response(
          409, R"({"Results":null,"Errors":[{"OpIndex":0,"What":"failed session check"}]})")));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Status status = DeleteIfHeld(*lock, "/meta");
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("lock 'a'"));
  EXPECT_THAT(status.message(), HasSubstr("'/meta'"));
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, FencedWriteFromAThreadThatDoesNotHoldTheLockIsFailedPrecondition) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Status status = PersistIfHeld(*lock, "/meta/v", "1");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("lock 'a'"));
  EXPECT_TRUE(absl::IsInvalidArgument(PersistIfHeld(*lock, "no-slash", "1")));
}

TEST_F(LockManagerTest, WaitersQueueInArrivalOrder) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillRepeatedly(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillRepeatedly(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      ASSERT_TRUE(lock->Lock().ok());
      {
        absl::MutexLock guard(&mu);
        order.push_back(i);
      }
      ASSERT_TRUE(lock->Unlock().ok());
    });
    // The next thread starts only once this one has its ticket.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (TwoTierOf(*lock).QueueLength() < i + 1 && absl::Now() < deadline)
      absl::SleepFor(absl::Milliseconds(1));
    ASSERT_EQ(TwoTierOf(*lock).QueueLength(), i + 1);
  }
  ASSERT_TRUE(lock->Unlock().ok());
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(order, ::testing::ElementsAre(0, 1, 2, 3));
}

TEST_F(LockManagerTest, ClosingTheRepositoryWakesALocalWaiterWithAnError) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Status waiter;
  std::thread thread([&] { waiter = lock->Lock(); });
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (TwoTierOf(*lock).QueueLength() < 1 && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(1));
  session_->Close();
  thread.join();
  EXPECT_TRUE(absl::IsFailedPrecondition(waiter)) << waiter;
  EXPECT_THAT(waiter.message(), HasSubstr("closed"));
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lock->Unlock().ok());  // ends the hold locally, no request
  EXPECT_TRUE(absl::IsFailedPrecondition(manager->GetLock("b").status()));
}

TEST_F(LockManagerTest, OneManagerPerInstanceSession) {
  auto manager = NewManager();
  absl::StatusOr<std::unique_ptr<LockManager>> second =
      LockManager::Create(session_->parts(), Options());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  manager.reset();
  EXPECT_EQ(session_->observer_count(), 0u);
  EXPECT_TRUE(LockManager::Create(session_->parts(), Options()).ok());
}

TEST_F(LockManagerTest, GetLockSharesOneObjectPerCanonicalName) {
  auto manager = NewManager();
  auto a = manager->GetLock("x/y");
  auto b = manager->GetLock("/x/y");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(TwoTierOf(*(*a)).consul_key(), "ns/lock/x/y/");
  EXPECT_TRUE(absl::IsInvalidArgument(manager->GetLock("x//y").status()));
}

}  // namespace
}  // namespace registry::lock::testing
