// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_minority_test.cc
//
// The lock's one promise under the fault that once broke it: the holder cut off together with a
// server on the minority side of a partition. That server is up and answers at once, but it
// knows no leader ("no leader" for as long as the partition lasts), while the majority's leader
// expires the holder's session and, after the lock-delay, hands the lock on. Here the minority
// server is a proxy in front of the test's server (integration/testing/delay_proxy.h) that starts
// answering as a leaderless server; the test's server plays the majority. The hold must end
// before anyone else can take the lock, whatever the minority server says.
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/lock/lock_fixture.h"
#include "integration/testing/delay_proxy.h"
#include "lock/lock_manager.h"

namespace registry::lock::testing {
namespace {

using registry::integration::DelayProxy;

// The first time something happened, for a test thread to wait on.
class Moment {
 public:
  void Mark() {
    absl::MutexLock lock(&mu_);
    if (at_ == absl::InfiniteFuture()) at_ = absl::Now();
  }
  // The moment, or InfiniteFuture if it did not come within `timeout`.
  absl::Time Await(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto came = [this]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return at_ != absl::InfiniteFuture(); };
    mu_.AwaitWithTimeout(absl::Condition(&came), timeout);
    return at_;
  }

 private:
  absl::Mutex mu_;
  absl::Time at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
};

TEST_F(LockTest, AHolderCutOffWithALeaderlessServerLosesItsHoldBeforeAnotherInstanceTakesIt) {
  const int port = std::stoi(address().substr(address().rfind(':') + 1));
  absl::StatusOr<std::unique_ptr<DelayProxy>> minority = DelayProxy::Start(port);
  ASSERT_TRUE(minority.ok()) << minority.status();
  ConsulRepositoryOptions holder_options = RepositoryOptions();
  holder_options.client.servers = (*minority)->address();
  std::unique_ptr<ConsulRepository> holder_repository = NewRepository(holder_options);
  ASSERT_NE(holder_repository, nullptr);
  // The managers' max_unreachable defaults to the 1 s TTL: under TSan and a loaded machine one
  // request through the proxy has taken longer than that, and Lock() gave up before the test
  // began. The test is about when the hold ends, which the session decides, not this budget.
  LockManagerOptions patient;
  patient.max_unreachable = kPatience;
  auto holder_manager = NewManager(*holder_repository, patient);
  auto held = GetLock(*holder_manager, "minority");
  Moment hold_ended;
  held->AddLostListener([&](const std::string&, const absl::Status&) { hold_ended.Mark(); });
  absl::Status locked = held->Lock();
  ASSERT_TRUE(locked.ok()) << locked;

  auto repository = NewRepository();
  auto manager = NewManager(*repository, patient);
  auto lock = GetLock(*manager, "minority");
  Moment taken;
  std::thread waiter([&] {
    absl::StatusOr<bool> locked = lock->TryLock(4 * kPatience);
    EXPECT_TRUE(locked.ok() && *locked) << locked.status();
    if (locked.ok() && *locked) {
      taken.Mark();
      EXPECT_TRUE(lock->Unlock().ok());
    }
  });

  (*minority)->set_leaderless(true);
  const absl::Time cut_at = absl::Now();
  const absl::Time taken_at = taken.Await(4 * kPatience);
  const absl::Time ended_at = hold_ended.Await(absl::ZeroDuration());
  waiter.join();
  ASSERT_NE(taken_at, absl::InfiniteFuture()) << "the majority never handed the lock on";
  ASSERT_NE(ended_at, absl::InfiniteFuture())
      << "the holder still held the lock " << (taken_at - cut_at)
      << " after the cut, when another instance took it";
  // The hold ends a TTL after the last renewal at the latest; the lock is free no sooner than
  // a TTL plus the lock-delay after it: the margin is the lock-delay (600 ms here).
  EXPECT_LT(ended_at, taken_at);
  EXPECT_GE(taken_at - ended_at, kLockDelay / 2)
      << "the hold ended " << (taken_at - ended_at) << " before the lock was taken";
  EXPECT_TRUE(held->lost());
  EXPECT_TRUE(held->Unlock().ok());
}

}  // namespace
}  // namespace registry::lock::testing
