// SPDX-License-Identifier: Apache-2.0
// tests/lock/lock_manager_test.cc
//
// The request sequence of the two-tier lock against a strict gmock transport: every request the
// lock makes must be expected, so an extra read or session call fails the test. Acquire and
// release; losses, fencing, waiters and lifetime are in lock_manager_loss_test.cc.
#include "lock/lock_manager.h"

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
#include "tests/lock/lock_manager_fixture.h"

namespace registry::lock::testing {
namespace {

using ::testing::_;
using ::testing::AtLeast;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Invoke;
using ::testing::Return;

TEST_F(LockManagerTest, UncontendedCycleIsOneAcquireAndOneReleaseWithoutSessionCalls) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_TRUE(lock->IsHeldByCurrentThread());
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
  EXPECT_EQ(session_->acquire_calls(), 0);  // the live session was used as is
}

TEST_F(LockManagerTest, FirstLockOfAnInstanceWithoutSessionCreatesItOnce) {
  session_->SetSession("");
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
      .Times(2)
      .WillRepeatedly(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _))
      .Times(2)
      .WillRepeatedly(Return(Applied(true)));
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(lock->Lock().ok());
    ASSERT_TRUE(lock->Unlock().ok());
  }
  EXPECT_EQ(session_->acquire_calls(), 1);
}

TEST_F(LockManagerTest, ReentryCountsHoldsWithoutRequestsAndOnlyTheLastUnlockReleases) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(lock->Lock().ok());
  absl::StatusOr<bool> again = lock->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(again.ok() && *again);
  EXPECT_EQ(lock->HoldCount(), 3);
  ASSERT_TRUE(lock->Unlock().ok());
  ASSERT_TRUE(lock->Unlock().ok());
  ::testing::Mock::VerifyAndClearExpectations(transport_.get());
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_EQ(lock->HoldCount(), 0);
}

TEST_F(LockManagerTest, UnlockByAThreadThatDoesNotHoldTheLockIsFailedPrecondition) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Status never_held = lock->Unlock();
  EXPECT_TRUE(absl::IsFailedPrecondition(never_held)) << never_held;
  EXPECT_THAT(never_held.message(), HasSubstr("'a'"));

  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Status other;
  std::thread([&] { other = lock->Unlock(); }).join();
  EXPECT_TRUE(absl::IsFailedPrecondition(other)) << other;
  EXPECT_TRUE(lock->IsHeldByCurrentThread());
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, ContendedLockBlocksOnTheKeyWithTheRemainingTimeInMilliseconds) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  HttpRequest blocking;
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("other", 7)));
    EXPECT_CALL(*transport_, Execute(IsBlockingRead("7"), _))
        .WillOnce(Invoke([&](const HttpRequest& request, consul::Canceller*) {
          blocking = request;
          return Entry("", 8);  // released
        }));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::Seconds(1));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_TRUE(*acquired);
  const std::string* wait = blocking.FindParam("wait");
  ASSERT_NE(wait, nullptr);
  ASSERT_TRUE(absl::EndsWith(*wait, "ms")) << *wait;
  int64_t millis = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::string_view(*wait).substr(0, wait->size() - 2), &millis));
  // The remaining time less Consul's jitter allowance (1/17), so the answer is never late.
  EXPECT_LE(millis, 1000 * 16 / 17);
  EXPECT_GT(millis, 800);
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, LockDelayIsRetriedOnATimerNotWithABlockingQuery) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  {
    InSequence sequence;
    // Refused although nobody holds the key (twice, to rule out a release in between).
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(ReadResponse(404, "", 9)));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(ReadResponse(404, "", 9)));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  }
  const absl::Time start = absl::Now();
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_GE(absl::Now() - start, session_->parts().lock_retry);
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, ZeroTimeoutMakesASingleAttemptAndHoldsNothingAfterFalse) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
  absl::StatusOr<bool> acquired = lock->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
  EXPECT_TRUE(absl::IsFailedPrecondition(lock->Unlock()));
}

TEST_F(LockManagerTest, AcquireWhoseAnswerWasLostIsReleasedAndChecked) {
  UseShortRequestTimeout();
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Notification checked;
  {
    InSequence sequence;
    // A lone acquire is resent after a lost answer (it applies the same twice) until the
    // request timeout: every resend's answer is lost too.
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
        .Times(AtLeast(1))
        .WillRepeatedly(Return(absl::UnavailableError("response timed out")));
    // Ours: released at the index read. Then a second look.
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("s1", 8)));
    EXPECT_CALL(*transport_, Execute(IsReleaseAt("s1", 8), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _))
        .WillOnce(Invoke([&](const HttpRequest&, consul::Canceller*) {
          checked.Notify();
          return Entry("", 9);
        }));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::ZeroDuration());
  EXPECT_TRUE(absl::IsUnavailable(acquired.status())) << acquired.status();
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
  // The release runs on the manager's thread, so that the caller is not held past its deadline.
  EXPECT_TRUE(checked.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(LockManagerTest, AcquireAppliedAfterTheFirstLookIsReleasedAtTheSecond) {
  UseShortRequestTimeout();
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Notification released;
  {
    InSequence sequence;
    // A lone acquire is resent after a lost answer (it applies the same twice) until the
    // request timeout: every resend's answer is lost too.
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
        .Times(AtLeast(1))
        .WillRepeatedly(Return(absl::UnavailableError("response timed out")));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("", 8)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("s1", 9)));
    EXPECT_CALL(*transport_, Execute(IsReleaseAt("s1", 9), _))
        .WillOnce(Invoke([&](const HttpRequest&, consul::Canceller*) {
          released.Notify();
          return Applied(true);
        }));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::ZeroDuration());
  EXPECT_FALSE(acquired.ok() && *acquired);
  EXPECT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(LockManagerTest, InvalidSessionIsReportedAndTheNextAttemptUsesItsSuccessor) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
        .WillOnce(Invoke([&](const HttpRequest&, consul::Canceller*) {
          session_->SetSession("s2");
          session_->Fire(InstanceSession::EventKind::kCreated, "s2");
          return Response(500, "Invalid session \"s1\"");
        }));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s2"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s2"), _)).WillOnce(Return(Applied(true)));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_THAT(session_->reported_invalid(), ::testing::ElementsAre("s1"));
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, ConsulUnreachableForLongerThanConfiguredFailsLock) {
  LockManagerOptions options = Options();
  options.max_unreachable = absl::Milliseconds(300);
  auto manager = NewManager(options);
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
      .WillRepeatedly(Return(consul::ConnectionError("connection refused")));
  // The last attempt may be cut by the unreachable budget before its answer (a slow build):
  // the manager then reads the key to release what it might hold; here it holds nothing.
  EXPECT_CALL(*transport_, Execute(IsPlainRead(), _))
      .Times(::testing::AnyNumber())
      .WillRepeatedly(Return(Entry("", 9)));
  const absl::Time start = absl::Now();
  absl::Status status = lock->Lock();
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("unreachable"));
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
}

}  // namespace
}  // namespace registry::lock::testing
