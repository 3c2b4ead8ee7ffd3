// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_deadline_test.cc
//
// TryLock's deadline bounds everything inside it, even on a slow server: the acquire, the reads
// and the session creation are cut at the deadline, and an acquire cut that way (which the
// server may still apply) never leaves the key bound to the instance.
#include <memory>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"
#include "lock/lock_manager.h"

namespace registry::lock::testing {
namespace {

// Every request to the dev server waits this long: far longer than the TryLock timeouts below.
constexpr absl::Duration kSlowServer = absl::Milliseconds(1500);
constexpr absl::Duration kTimeout = absl::Milliseconds(150);

// Dev server only: it slows every request down.
class LockDeadlineFaultsTest : public registry::testing::DevServerOnly<LockTest> {
 protected:
  struct Attempt {
    absl::StatusOr<bool> acquired;
    absl::Duration took;
  };

  // lock.TryLock(kTimeout) while every request to the server waits kSlowServer.
  Attempt TryLockOnASlowServer(DistributedLock& lock) {
    server().SetLatency(kSlowServer);
    const absl::Time start = absl::Now();
    Attempt attempt{lock.TryLock(kTimeout), absl::ZeroDuration()};
    attempt.took = absl::Now() - start;
    server().SetLatency(absl::ZeroDuration());
    return attempt;
  }

  // Gives `manager`'s instance its session (a lock and an unlock of another lock).
  void CreateTheSession(LockManager& manager) {
    auto warm_up = GetLock(manager, "warm-up");
    ASSERT_TRUE(warm_up->Lock().ok());
    ASSERT_TRUE(warm_up->Unlock().ok());
  }
};

TEST_F(LockDeadlineFaultsTest, TryLockReturnsByItsDeadlineWhenConsulIsSlow) {
  auto holder_repository = NewRepository();
  auto holder_manager = NewManager(*holder_repository);
  auto held = GetLock(*holder_manager, "slow");
  const absl::Status locked = held->Lock();
  ASSERT_TRUE(locked.ok()) << locked;
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  CreateTheSession(*manager);
  auto lock = GetLock(*manager, "slow");

  Attempt attempt = TryLockOnASlowServer(*lock);
  ASSERT_TRUE(attempt.acquired.ok()) << attempt.acquired.status();
  EXPECT_FALSE(*attempt.acquired);
  EXPECT_GE(attempt.took, kTimeout);
  // Waiting for the acquire's answer would take kSlowServer.
  EXPECT_LT(attempt.took, kSlowServer) << "TryLock(" << kTimeout << ") took " << attempt.took;
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
}

TEST_F(LockDeadlineFaultsTest,
       TryLockThatMustCreateTheSessionReturnsByItsDeadlineWhenConsulIsSlow) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "slow-session");

  Attempt attempt = TryLockOnASlowServer(*lock);
  ASSERT_TRUE(attempt.acquired.ok()) << attempt.acquired.status();
  EXPECT_FALSE(*attempt.acquired);
  EXPECT_LT(attempt.took, kSlowServer) << "TryLock(" << kTimeout << ") took " << attempt.took;
  // The instance recovers: the next attempt creates a session and takes the free lock.
  absl::StatusOr<bool> again = lock->TryLock(kPatience);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again);
  ASSERT_TRUE(lock->Unlock().ok());
}

TEST_F(LockDeadlineFaultsTest, AnAcquireCutByTheDeadlineNeverLeavesTheKeyBoundToTheInstance) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  CreateTheSession(*manager);
  auto lock = GetLock(*manager, "cut");

  // The lock is free: the server applies the cut acquire once its latency has passed.
  Attempt attempt = TryLockOnASlowServer(*lock);
  ASSERT_TRUE(attempt.acquired.ok()) << attempt.acquired.status();
  ASSERT_FALSE(*attempt.acquired);

  // Another instance gets the lock: the instance released what the cut acquire took (its
  // session lives on, so nothing else would).
  auto other_repository = NewRepository();
  auto other_manager = NewManager(*other_repository);
  auto other = GetLock(*other_manager, "cut");
  absl::StatusOr<bool> taken = other->TryLock(kPatience);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_TRUE(*taken);
  ASSERT_TRUE(other->Unlock().ok());
  // And the instance itself can take it again.
  absl::StatusOr<bool> retaken = lock->TryLock(kPatience);
  ASSERT_TRUE(retaken.ok()) << retaken.status();
  EXPECT_TRUE(*retaken);
  ASSERT_TRUE(lock->Unlock().ok());
}

}  // namespace
}  // namespace registry::lock::testing
