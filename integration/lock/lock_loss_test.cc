// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_loss_test.cc
//
// Lock-delay, loss of a held lock (session expiry, key deletion), fencing after a loss, and
// closing a repository under waiting threads, against the in-process dev server.
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"

namespace registry::lock::testing {
namespace {

using ::testing::Each;
using ::testing::HasSubstr;

TEST_F(LockFaultsTest, LockDelayAfterTheHolderSessionIsDestroyedIsWaitedOutOnATimer) {
  auto holder_repository = NewRepository();
  auto holder_manager = NewManager(*holder_repository);
  auto held = GetLock(*holder_manager, "delayed");
  ASSERT_TRUE(held->Lock().ok());

  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "delayed");
  server().ResetRequestCounts();
  absl::Status locked;
  absl::Time acquired_at;
  std::thread waiter([&] {
    locked = lock->Lock();
    acquired_at = absl::Now();
    if (locked.ok()) locked = lock->Unlock();
  });
  ASSERT_TRUE(Eventually([&] { return Requests("kv.get") >= 2; }));  // blocked on the key

  // Closing destroys the holder's session: its key is deleted under lock-delay.
  const absl::Time destroyed_at = absl::Now();
  ASSERT_TRUE(holder_repository->Close().ok());
  waiter.join();
  ASSERT_TRUE(locked.ok()) << locked;
  EXPECT_GE(acquired_at - destroyed_at, kLockDelay);
  EXPECT_LE(acquired_at - destroyed_at, kLockDelay + absl::Milliseconds(500));
  EXPECT_TRUE(held->lost());
  EXPECT_TRUE(held->Unlock().ok());
}

TEST_F(LockTest, ForcedSessionExpiryReportsTheHoldLostAndFencesWrites) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "expiring");
  LossRecorder losses;
  lock->AddLostListener(losses.Listener());
  ASSERT_TRUE(lock->Lock().ok());
  const std::string session = HolderOf(*lock);
  ASSERT_FALSE(session.empty());

  ASSERT_TRUE(ExpireSession(session).ok());
  ASSERT_TRUE(losses.AwaitCount(1));
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lock->IsHeldByCurrentThread());  // until the holder unlocks
  absl::Status fenced = PersistIfHeld(*lock, "/metadata/version", "2");
  EXPECT_TRUE(absl::IsAborted(fenced)) << fenced;
  EXPECT_THAT(fenced.message(), HasSubstr("lock 'expiring'"));
  EXPECT_EQ(repository->Get("/metadata/version").value(), std::nullopt);
  ASSERT_TRUE(lock->Unlock().ok());

  // The next acquisition uses the instance's new session (after the old one's lock-delay).
  const absl::Status relocked = lock->Lock();
  ASSERT_TRUE(relocked.ok()) << relocked;
  EXPECT_FALSE(lock->lost());
  EXPECT_NE(HolderOf(*lock), session);
  EXPECT_TRUE(PersistIfHeld(*lock, "/metadata/version", "2").ok());
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_EQ(losses.reasons().size(), 1u);
}

TEST_F(LockTest, AThrowingLostListenerNeitherEndsTheProcessNorSilencesTheOthers) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "throwing");
  lock->AddLostListener([](const std::string&, const absl::Status&) {
    throw std::runtime_error("listener failure");
  });
  LossRecorder losses;
  lock->AddLostListener(losses.Listener());
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(ExpireSession(HolderOf(*lock)).ok());
  ASSERT_TRUE(losses.AwaitCount(1));
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockFaultsTest, DeletingTheHeldLockKeyReportsTheHoldLost) {
  auto repository = NewRepository();
  LockManagerOptions options;
  options.monitor_delay = absl::ZeroDuration();
  auto manager = NewManager(*repository, options);
  auto lock = GetLock(*manager, "deleted");
  LossRecorder losses;
  lock->AddLostListener(losses.Listener());
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(Eventually([&] { return Requests("kv.get") >= 1; }));  // monitor started

  ASSERT_TRUE(raw().KvDelete(TwoTierOf(*lock).consul_key()).ok());
  ASSERT_TRUE(losses.AwaitCount(1));
  EXPECT_THAT(losses.reasons(), Each(HasSubstr("deleted")));
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(absl::IsAborted(DeleteIfHeld(*lock, "/metadata")));
  ASSERT_TRUE(lock->Unlock().ok());
}

TEST_F(LockTest, ConsulRefusesAFencedWriteBeforeTheLossIsNoticedLocally) {
  auto repository = NewRepository();
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // nothing watches the key
  auto manager = NewManager(*repository, options);
  auto lock = GetLock(*manager, "fenced");
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(raw().KvDelete(TwoTierOf(*lock).consul_key()).ok());
  EXPECT_FALSE(lock->lost());

  absl::Status fenced = PersistIfHeld(*lock, "/metadata/version", "3");
  EXPECT_TRUE(absl::IsAborted(fenced)) << fenced;
  EXPECT_THAT(fenced.message(), HasSubstr("no longer holds"));
  EXPECT_EQ(repository->Get("/metadata/version").value(), std::nullopt);
  EXPECT_TRUE(lock->lost());
  ASSERT_TRUE(lock->Unlock().ok());
}

TEST_F(LockFaultsTest, ClosingTheRepositoryReturnsWaitersPromptlyWithAnError) {
  auto holder_repository = NewRepository();
  auto holder_manager = NewManager(*holder_repository);
  auto held = GetLock(*holder_manager, "closing");
  ASSERT_TRUE(held->Lock().ok());

  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "closing");
  server().ResetRequestCounts();
  absl::Status remote_waiter;  // blocked on the key in Consul
  absl::Status local_waiter;   // queued behind it in the process
  std::thread first([&] { remote_waiter = lock->Lock(); });
  ASSERT_TRUE(Eventually([&] { return Requests("kv.get") >= 2; }));
  std::thread second([&] { local_waiter = lock->Lock(); });
  ASSERT_TRUE(Eventually([&] { return TwoTierOf(*lock).QueueLength() >= 1; }));

  const absl::Time closed_at = absl::Now();
  ASSERT_TRUE(repository->Close().ok());
  first.join();
  second.join();
  EXPECT_LT(absl::Now() - closed_at, absl::Seconds(1));
  EXPECT_TRUE(absl::IsFailedPrecondition(remote_waiter)) << remote_waiter;
  EXPECT_TRUE(absl::IsFailedPrecondition(local_waiter)) << local_waiter;
  EXPECT_THAT(remote_waiter.message(), HasSubstr("closed"));
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
  EXPECT_NE(HolderOf(*held), "");  // the other instance still holds it
  ASSERT_TRUE(held->Unlock().ok());
}

// A host that checks its locks when it hears LOST finds them lost.
TEST_F(LockTest, ConnectionListenersHearLostAfterTheLocksOfTheSessionAreMarkedLost) {
  absl::Notification told;
  bool lost_when_told = false;
  auto repository = NewRepository();
  // No key monitor: it would see the key go before the session keeper sees the session go.
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();
  auto manager = NewManager(*repository, options);
  auto lock = GetLock(*manager, "order");
  ASSERT_TRUE(lock->Lock().ok());
  DistributedLock* held = lock.get();
  repository->AddConnectionListener([&, held](ConnectionState state) {
    if (state != ConnectionState::kLost || told.HasBeenNotified()) return;
    lost_when_told = held->lost();
    told.Notify();
  });
  ASSERT_TRUE(ExpireSession(HolderOf(*lock)).ok());
  ASSERT_TRUE(told.WaitForNotificationWithTimeout(kPatience));
  EXPECT_TRUE(lost_when_told);
  lock->Unlock().IgnoreError();
}

// A data callback may call any method, Lock included; Close cancels lock waiters before it
// waits for running callbacks, or it would wait for one that waits for it.
TEST_F(LockTest, CloseReturnsWhileAWatchCallbackWaitsForALockAndTheWaiterFails) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "held-here");
  ASSERT_TRUE(lock->Lock().ok());  // this thread holds it: the callback waits in tier 1
  absl::Notification entered;
  absl::Notification returned;
  absl::Status waited;
  ASSERT_TRUE(repository
                  ->Watch("/w",
                          [&](const DataChangedEvent&) {
                            if (entered.HasBeenNotified()) return;
                            entered.Notify();
                            waited = lock->Lock();
                            returned.Notify();
                          })
                  .ok());
  ASSERT_TRUE(repository->Persist("/w", "1").ok());
  ASSERT_TRUE(entered.WaitForNotificationWithTimeout(kPatience));

  absl::Notification closed;
  std::thread closer([&] {
    repository->Close().IgnoreError();
    closed.Notify();
  });
  const bool closed_in_time = closed.WaitForNotificationWithTimeout(kPatience);
  lock->Unlock().IgnoreError();  // lets a hung Close finish, so that the test ends either way
  closer.join();
  EXPECT_TRUE(closed_in_time) << "Close() waited for a callback that waited for a lock";
  ASSERT_TRUE(returned.WaitForNotificationWithTimeout(kPatience));
  EXPECT_TRUE(absl::IsFailedPrecondition(waited)) << waited;
}

}  // namespace
}  // namespace registry::lock::testing
