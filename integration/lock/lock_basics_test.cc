// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_basics_test.cc
//
// Two-tier locks against the in-process dev server: request counts, reentrancy, timeout
// accuracy, mutual exclusion between threads and between instances, fenced writes.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"

namespace registry::lock::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(LockFaultsTest, UncontendedLockAndUnlockCostOneAcquireAndOneRelease) {
  auto repository = NewRepository();
  // No key monitor: on a slow machine a hold can outlast its delay, and the monitor's reads of a
  // long hold are not part of what a lock and an unlock cost.
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();
  auto manager = NewManager(*repository, options);
  auto lock = GetLock(*manager, "schema/db1");
  ASSERT_TRUE(lock->Lock().ok());  // first use: creates the instance session
  ASSERT_TRUE(lock->Unlock().ok());
  server().ResetRequestCounts();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(lock->Lock().ok());
    EXPECT_FALSE(HolderOf(*lock).empty());
    ASSERT_TRUE(lock->Unlock().ok());
  }
  EXPECT_EQ(Requests("txn"), 10u);    // an acquire and a release per cycle
  EXPECT_EQ(Requests("kv.get"), 5u);  // only the test's own HolderOf() reads
  EXPECT_EQ(Requests("session.create"), 0u);
  EXPECT_EQ(Requests("kv.put"), 0u);
  EXPECT_EQ(HolderOf(*lock), "");
}

// Both holds use the instance session, so Consul alone could not tell hold 1's release from
// hold 2's. The release the client sends for hold 1 (check-index at hold 1's index + unlock),
// arriving late, must leave hold 2 held; so must a late fenced write of hold 1.
TEST_F(LockTest, ADelayedReleaseOrFencedWriteOfAnEarlierHoldCannotActOnALaterOne) {
  auto repository = NewRepository();
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // only the requests under test
  auto manager = NewManager(*repository, options);
  auto lock = GetLock(*manager, "fenced");
  ASSERT_TRUE(lock->Lock().ok());
  absl::StatusOr<consul::KvGetResult> first = raw().KvGet(TwoTierOf(*lock).consul_key());
  ASSERT_TRUE(first.ok() && first->entry.has_value());
  const std::string session = first->entry->session;
  const uint64_t first_index = first->entry->modify_index;
  ASSERT_TRUE(lock->Unlock().ok());
  ASSERT_TRUE(lock->Lock().ok());  // hold 2

  const consul::TxnOp late_release[] = {
      consul::TxnOp::CheckIndex(TwoTierOf(*lock).consul_key(), first_index),
      consul::TxnOp::Unlock(TwoTierOf(*lock).consul_key(), "", session)};
  absl::StatusOr<consul::TxnResult> released = raw().Txn(late_release);
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_FALSE(released->committed);
  const consul::TxnOp late_write[] = {
      consul::TxnOp::CheckIndex(TwoTierOf(*lock).consul_key(), first_index),
      consul::TxnOp::Set("locks/metadata/v", "stale")};
  absl::StatusOr<consul::TxnResult> written = raw().Txn(late_write);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_FALSE(written->committed);
  EXPECT_EQ(HolderOf(*lock), session);  // hold 2 is intact
  EXPECT_EQ(repository->Get("/metadata/v").value(), std::nullopt);
  ASSERT_TRUE(PersistIfHeld(*lock, "/metadata/v", "current").ok());
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_EQ(HolderOf(*lock), "");
}

TEST_F(LockFaultsTest, ReentryByTheHoldingThreadMakesNoRequest) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "reentrant");
  ASSERT_TRUE(lock->Lock().ok());
  server().ResetRequestCounts();
  ASSERT_TRUE(lock->Lock().ok());
  absl::StatusOr<bool> again = lock->TryLock(absl::Milliseconds(10));
  ASSERT_TRUE(again.ok() && *again);
  EXPECT_EQ(lock->HoldCount(), 3);
  ASSERT_TRUE(lock->Unlock().ok());
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_EQ(Requests("kv.put"), 0u);
  EXPECT_FALSE(HolderOf(*lock).empty());  // still held: one hold left
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_EQ(HolderOf(*lock), "");
}

TEST_F(LockTest, TryLockTimeoutIsNeverEarlyAndLateByAtMostAFewRoundTrips) {
  auto holder_repository = NewRepository();
  auto holder_manager = NewManager(*holder_repository);
  auto held = GetLock(*holder_manager, "busy");
  ASSERT_TRUE(held->Lock().ok());

  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "busy");
  // Past the deadline TryLock only finishes the request that the deadline cut and returns:
  // 50 ms, plus four of the slowest round trips measured in this build (a few ms normally; a
  // sanitizer build on a busy machine is many times slower).
  const absl::Duration slack = absl::Milliseconds(50) + 4 * SlowestRoundTrip();
  for (absl::Duration timeout :
       {absl::Milliseconds(100), absl::Milliseconds(350), absl::Milliseconds(900)}) {
    const absl::Time start = absl::Now();
    absl::StatusOr<bool> acquired = lock->TryLock(timeout);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(acquired.ok()) << acquired.status();
    EXPECT_FALSE(*acquired);
    EXPECT_GE(took, timeout);
    EXPECT_LE(took, timeout + slack) << "timeout " << timeout;
    EXPECT_FALSE(lock->IsHeldByCurrentThread());
    EXPECT_NE(HolderOf(*lock), "");
  }
  // The holder's session still holds the key: nothing of the waiter's was left behind.
  EXPECT_EQ(HolderOf(*held), HolderOf(*lock));
  ASSERT_TRUE(held->Unlock().ok());
}

TEST_F(LockFaultsTest, TryLockSucceedsWhenTheHolderReleasesBeforeTheDeadline) {
  auto holder_repository = NewRepository();
  auto holder_manager = NewManager(*holder_repository);
  auto held = GetLock(*holder_manager, "handoff");
  ASSERT_TRUE(held->Lock().ok());
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "handoff");

  server().ResetRequestCounts();
  absl::StatusOr<bool> acquired = false;
  absl::Status unlocked;
  std::thread waiter([&] {
    acquired = lock->TryLock(kPatience);
    if (acquired.ok() && *acquired) unlocked = lock->Unlock();
  });
  // Release once the waiter blocks on the key (its acquire, its read, then the blocking read);
  // the release wakes it, and an explicit release sets no lock-delay.
  // (EXPECT, not ASSERT: the waiter must be joined.)
  EXPECT_TRUE(Eventually([&] { return Requests("kv.get") >= 2; })) << "the waiter never blocked";
  const absl::Time released = absl::Now();
  ASSERT_TRUE(held->Unlock().ok());
  waiter.join();
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_TRUE(*acquired);
  EXPECT_TRUE(unlocked.ok()) << unlocked;
  EXPECT_LT(absl::Now() - released, absl::Seconds(1));
}

TEST_F(LockTest, ThreadsOfOneProcessAreMutuallyExclusive) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "counter");
  int counter = 0;  // deliberately not atomic: only the lock protects it
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        ASSERT_TRUE(lock->Lock().ok());
        if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
        const int seen = counter;
        std::this_thread::yield();
        counter = seen + 1;
        inside.fetch_sub(1);
        ASSERT_TRUE(lock->Unlock().ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter, kThreads * kRounds);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(HolderOf(*lock), "");
}

TEST_F(LockTest, TwoInstancesContendingExcludeEachOther) {
  auto first_repository = NewRepository();
  auto second_repository = NewRepository();
  auto first = NewManager(*first_repository);
  auto second = NewManager(*second_repository);
  std::vector<std::shared_ptr<DistributedLock>> locks = {GetLock(*first, "shared"),
                                                         GetLock(*second, "shared")};
  // Exclusion between instances comes from Consul only, so the shared state is atomic for the
  // race detector's sake, but read and written in two steps: an overlap would lose updates.
  std::atomic<int> counter{0};
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  constexpr int kThreadsPerInstance = 2;
  constexpr int kRounds = 15;
  std::vector<std::thread> threads;
  for (const auto& lock : locks) {
    for (int t = 0; t < kThreadsPerInstance; ++t) {
      threads.emplace_back([&, lock] {
        for (int i = 0; i < kRounds; ++i) {
          ASSERT_TRUE(lock->Lock().ok());
          if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
          const int seen = counter.load();
          std::this_thread::yield();
          counter.store(seen + 1);
          inside.fetch_sub(1);
          ASSERT_TRUE(lock->Unlock().ok());
        }
      });
    }
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.load(), 2 * kThreadsPerInstance * kRounds);
  EXPECT_EQ(overlaps.load(), 0);
}

TEST_F(LockTest, FencedWritesApplyWhileTheLockIsHeld) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "schema");
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*lock, "/metadata/db1/version", "7").ok());
  ASSERT_TRUE(PersistIfHeld(*lock, "/metadata/db1/tables/t1", "x").ok());
  EXPECT_EQ(repository->Get("/metadata/db1/version").value(), "7");
  ASSERT_TRUE(DeleteIfHeld(*lock, "/metadata/db1").ok());
  EXPECT_EQ(repository->Get("/metadata/db1/tables/t1").value(), std::nullopt);
  ASSERT_TRUE(lock->Unlock().ok());
  absl::Status after = PersistIfHeld(*lock, "/metadata/db1/version", "8");
  EXPECT_TRUE(absl::IsFailedPrecondition(after)) << after;
  EXPECT_THAT(after.message(), HasSubstr("lock 'schema'"));
}

TEST_F(LockFaultsTest, FencedWriteWhoseReplyIsLostIsSentAgainAndSucceeds) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "schema");
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*lock, "/metadata/version", "1").ok());
  server().DropNextReplies(1, "/v1/txn", "PUT");  // applied, reply lost
  absl::Status written = PersistIfHeld(*lock, "/metadata/version", "2");
  EXPECT_TRUE(written.ok()) << written;
  EXPECT_EQ(repository->Get("/metadata/version").value(), "2");
  server().DropNextReplies(1, "/v1/txn", "PUT");
  absl::Status deleted = DeleteIfHeld(*lock, "/metadata");
  EXPECT_TRUE(deleted.ok()) << deleted;
  EXPECT_EQ(repository->Get("/metadata/version").value(), std::nullopt);
  EXPECT_FALSE(lock->lost());
  ASSERT_TRUE(lock->Unlock().ok());
}

// Fenced writes go through the ephemeral bookkeeping, as Persist and Delete do: after a session
// loss the instance re-creates none of the ephemeral keys they overwrote or deleted.
TEST_F(LockTest, FencedWritesOfEphemeralKeysAreNotUndoneAfterASessionLoss) {
  absl::Notification reconnected;
  auto repository = NewRepository();
  repository->AddConnectionListener([&](ConnectionState state) {
    if (state == ConnectionState::kReconnected && !reconnected.HasBeenNotified()) {
      reconnected.Notify();
    }
  });
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "schema");
  ASSERT_TRUE(repository->PersistEphemeral("/online/node", "old").ok());
  ASSERT_TRUE(repository->PersistEphemeral("/gone/child", "x").ok());
  ASSERT_TRUE(repository->PersistEphemeral("/kept", "k").ok());
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*lock, "/online/node", "new").ok());
  EXPECT_EQ(KeySession("locks/online/node"), "");  // persistent now, like Persist leaves it
  ASSERT_TRUE(DeleteIfHeld(*lock, "/gone").ok());
  ASSERT_TRUE(lock->Unlock().ok());

  ASSERT_TRUE(ExpireSession(*KeySession("locks/kept")).ok());
  ASSERT_TRUE(reconnected.WaitForNotificationWithTimeout(kPatience));
  EXPECT_EQ(repository->Get("/kept").value(), "k");  // the restore pass ran
  EXPECT_EQ(repository->Get("/online/node").value(), "new");
  EXPECT_EQ(repository->Get("/gone/child").value(), std::nullopt);
}

TEST_F(LockTest, LockKeysDoNotCollideWithRepositoryKeys) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto lock = GetLock(*manager, "a");
  ASSERT_TRUE(repository->Persist("/lock/a", "user value").ok());
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(repository->Persist("/lock/a", "changed").ok());
  EXPECT_EQ(repository->Get("/lock/a").value(), "changed");
  EXPECT_FALSE(HolderOf(*lock).empty());
  EXPECT_FALSE(lock->lost());
  ASSERT_TRUE(lock->Unlock().ok());
}

}  // namespace
}  // namespace registry::lock::testing
