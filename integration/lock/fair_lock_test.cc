// SPDX-License-Identifier: Apache-2.0
// integration/lock/fair_lock_test.cc
//
// The fair lock (LockManager::GetFairLock) against the dev server and real Consul: FIFO order
// across instances, one waiter woken per release, a dead holder's entry and owner key freed, a
// TryLock that gives up leaving no entry, fencing and loss.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "devserver/store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"

namespace registry::lock::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// One instance contending for the fair lock: a repository, its manager and the lock.
struct Contender {
  std::unique_ptr<ConsulRepository> repository;
  std::unique_ptr<LockManager> manager;
  std::shared_ptr<DistributedLock> lock;
};

class FairLockTest : public LockTest {
 protected:
  Contender NewContender(const std::string& name, LockManagerOptions options = {}) {
    Contender contender;
    contender.repository = NewRepository();
    contender.manager = NewManager(*contender.repository, std::move(options));
    absl::StatusOr<std::shared_ptr<DistributedLock>> lock = contender.manager->GetFairLock(name);
    EXPECT_TRUE(lock.ok()) << lock.status();
    if (lock.ok()) contender.lock = *lock;
    return contender;
  }

  // The entries queued for the fair lock `name`.
  size_t QueueLength(const std::string& name) {
    absl::StatusOr<consul::KvListResult> listed =
        raw().KvList(absl::StrCat(RepositoryOptions().namespace_name, "/fair-queue/", name, "/"));
    EXPECT_TRUE(listed.ok()) << listed.status();
    return listed.ok() ? listed->entries.size() : 0;
  }
};

class FairLockFaultsTest : public registry::testing::DevServerOnly<FairLockTest> {};

TEST_F(FairLockFaultsTest, UncontendedLockAndUnlockCostThreeRequests) {
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // only what a lock and an unlock cost
  Contender contender = NewContender("schema/db1", options);
  ASSERT_TRUE(contender.lock->Lock().ok());  // first use: creates the instance session
  ASSERT_TRUE(contender.lock->Unlock().ok());
  server().ResetRequestCounts();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(contender.lock->Lock().ok());
    ASSERT_TRUE(contender.lock->Unlock().ok());
  }
  // A registration, the owner key and a release per cycle.
  EXPECT_EQ(Requests("txn"), 15u);
  EXPECT_EQ(Requests("kv.get"), 0u);
  EXPECT_EQ(Requests("session.create"), 0u);
  EXPECT_EQ(QueueLength("schema/db1"), 0u);  // every entry went with its hold
}

TEST_F(FairLockFaultsTest, ARegistrationWhoseReplyWasLostIsSentAgainAndLeavesOneEntry) {
  Contender waiter = NewContender("lost-reply");
  Contender holder = NewContender("lost-reply");
  ASSERT_TRUE(holder.lock->Lock().ok());
  server().DropNextReplies(1, "/v1/txn", "PUT");  // the registration is applied, its reply lost
  absl::StatusOr<bool> acquired = waiter.lock->TryLock(absl::Milliseconds(300));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  // Sent again with the same entry: the waiter queued once, and gave its place up once.
  EXPECT_TRUE(Eventually([&] { return QueueLength("lost-reply") == 1; }));
  ASSERT_TRUE(holder.lock->Unlock().ok());
  server().DropNextReplies(1, "/v1/txn", "PUT");
  ASSERT_TRUE(waiter.lock->Lock().ok());
  EXPECT_EQ(QueueLength("lost-reply"), 1u);
  ASSERT_TRUE(waiter.lock->Unlock().ok());
  EXPECT_EQ(QueueLength("lost-reply"), 0u);
}

TEST_F(FairLockFaultsTest, TryLockOnASlowServerReturnsByItsDeadlineAndLeavesNothingBehind) {
  Contender contender = NewContender("slow");
  ASSERT_TRUE(contender.lock->Lock().ok());  // the instance has its session
  ASSERT_TRUE(contender.lock->Unlock().ok());
  const absl::Duration timeout = absl::Milliseconds(150);
  server().SetLatency(absl::Milliseconds(100));  // the registration answers, the owner key not
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> acquired = contender.lock->TryLock(timeout);
  const absl::Duration took = absl::Now() - start;
  server().SetLatency(absl::ZeroDuration());
  EXPECT_FALSE(acquired.ok() && *acquired) << "acquired through a 100 ms server in 150 ms?";
  EXPECT_LT(took, timeout + absl::Milliseconds(50) + 4 * SlowestRoundTrip());
  // The entry, and the owner key if the cut acquire landed, are cleaned up by the manager.
  EXPECT_TRUE(
      Eventually([&] { return QueueLength("slow") == 0 && HolderOf(*contender.lock) == ""; }));
  acquired = contender.lock->TryLock(kPatience);
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  EXPECT_TRUE(contender.lock->Unlock().ok());
}

TEST_F(FairLockTest, InstancesGetTheLockInTheOrderTheyQueued) {
  constexpr char kName[] = "fifo";
  Contender holder = NewContender(kName);
  ASSERT_TRUE(holder.lock->Lock().ok());
  constexpr int kWaiters = 4;
  std::vector<Contender> waiters;
  for (int i = 0; i < kWaiters; ++i) waiters.push_back(NewContender(kName));
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<bool> acquired = waiters[i].lock->TryLock(kPatience);
      ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
      {
        absl::MutexLock lock(&mu);
        order.push_back(i);
      }
      EXPECT_TRUE(waiters[i].lock->Unlock().ok());
    });
    // Queue them one after the other: waiter i is registered before waiter i + 1 starts.
    ASSERT_TRUE(Eventually([&] { return QueueLength(kName) == static_cast<size_t>(i + 2); }));
  }
  ASSERT_TRUE(holder.lock->Unlock().ok());
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3));
}

TEST_F(FairLockFaultsTest, OneReleaseWakesOnlyTheNextWaiter) {
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // no key watch reads in the counts
  constexpr char kName[] = "herd";
  Contender holder = NewContender(kName, options);
  ASSERT_TRUE(holder.lock->Lock().ok());
  constexpr int kWaiters = 5;
  std::vector<Contender> waiters;
  for (int i = 0; i < kWaiters; ++i) waiters.push_back(NewContender(kName, options));
  std::vector<std::thread> threads;
  absl::Notification first_holds;
  absl::Notification let_go;
  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<bool> acquired = waiters[i].lock->TryLock(kPatience);
      ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
      if (i == 0) {
        first_holds.Notify();
        let_go.WaitForNotification();
      }
      EXPECT_TRUE(waiters[i].lock->Unlock().ok());
    });
    ASSERT_TRUE(Eventually([&] { return QueueLength(kName) == static_cast<size_t>(i + 2); }));
  }
  // Every waiter is parked in a blocking read of its predecessor's entry.
  ASSERT_TRUE(Eventually([&] { return server().store().watch_count() >= size_t{kWaiters}; }));
  server().ResetRequestCounts();
  ASSERT_TRUE(holder.lock->Unlock().ok());
  ASSERT_TRUE(first_holds.WaitForNotificationWithTimeout(kPatience));
  // The release (1 txn) woke waiter 0 alone: its queue read (1 get) put it at the head, and it
  // took the owner key (1 txn). The other waiters made no request.
  EXPECT_EQ(Requests("txn"), 2u);
  EXPECT_EQ(Requests("kv.get"), 1u);
  let_go.Notify();
  for (std::thread& thread : threads) thread.join();
}

TEST_F(FairLockTest, TheEntryOfAHolderWhoseSessionEndedGoesAndTheNextWaiterProceeds) {
  Contender holder = NewContender("dead-holder");
  Contender waiter = NewContender("dead-holder");
  ASSERT_TRUE(holder.lock->Lock().ok());
  const std::string holder_session = HolderOf(*holder.lock);
  ASSERT_FALSE(holder_session.empty());
  std::thread destroy([&] {
    // The holder's instance dies: Consul ends its session and deletes its entry and the owner
    // key; the waiter gets the lock after the lock-delay.
    ASSERT_TRUE(Eventually([&] { return QueueLength("dead-holder") == 2; }));
    EXPECT_TRUE(raw().DestroySession(holder_session).ok());
  });
  absl::StatusOr<bool> acquired = waiter.lock->TryLock(kPatience);
  destroy.join();
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  EXPECT_TRUE(waiter.lock->Unlock().ok());
  EXPECT_TRUE(holder.lock->Unlock().ok());  // ends the lost hold locally
}

TEST_F(FairLockTest, TryLockThatGivesUpLeavesNoEntryBehind) {
  Contender holder = NewContender("give-up");
  Contender waiter = NewContender("give-up");
  ASSERT_TRUE(holder.lock->Lock().ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> acquired = waiter.lock->TryLock(absl::Milliseconds(300));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_TRUE(Eventually([&] { return QueueLength("give-up") == 1; }));
  ASSERT_TRUE(holder.lock->Unlock().ok());
  // And the waiter's next try is not stuck behind an entry of its own.
  acquired = waiter.lock->TryLock(kPatience);
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  EXPECT_TRUE(waiter.lock->Unlock().ok());
}

TEST_F(FairLockTest, FencedWritesLandWhileHeldAndAHoldWhoseOwnerKeyIsDeletedIsLost) {
  Contender contender = NewContender("fenced");
  LossRecorder losses;
  contender.lock->AddLostListener(losses.Listener());
  ASSERT_TRUE(contender.lock->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*contender.lock, "/metadata/v", "1").ok());
  EXPECT_EQ(contender.repository->Get("/metadata/v").value(), "1");
  // Someone deletes the queue: the key watch of the hold reports it lost, and Consul refuses
  // further fenced writes.
  absl::StatusOr<bool> deleted =
      raw().KvDelete(TwoTierOf(*contender.lock).consul_key(), {.recurse = true});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_TRUE(losses.AwaitCount(1));
  EXPECT_THAT(losses.reasons()[0], HasSubstr("was deleted"));
  EXPECT_TRUE(contender.lock->lost());
  absl::Status refused = PersistIfHeld(*contender.lock, "/metadata/v", "2");
  EXPECT_TRUE(absl::IsAborted(refused)) << refused;
  EXPECT_EQ(contender.repository->Get("/metadata/v").value(), "1");
  EXPECT_EQ(QueueLength("fenced"), 1u);
  EXPECT_TRUE(contender.lock->Unlock().ok());
  EXPECT_EQ(QueueLength("fenced"), 0u);  // the lost hold's entry no longer blocks the queue
}

TEST_F(FairLockTest, AFairLockAndAMutexOfTheSameNameAreDifferentLocks) {
  Contender contender = NewContender("shared-name");
  std::shared_ptr<DistributedLock> mutex = GetLock(*contender.manager, "shared-name");
  EXPECT_NE(mutex.get(), contender.lock.get());
  EXPECT_NE(TwoTierOf(*mutex).consul_key(), TwoTierOf(*contender.lock).consul_key());
  ASSERT_TRUE(contender.lock->Lock().ok());
  absl::StatusOr<bool> both = mutex->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(both.ok() && *both) << both.status();
  EXPECT_TRUE(mutex->Unlock().ok());
  EXPECT_TRUE(contender.lock->Unlock().ok());
}

}  // namespace
}  // namespace registry::lock::testing
