// SPDX-License-Identifier: Apache-2.0
// integration/lock/semaphore_test.cc
//
// The semaphore (LockManager::GetSemaphore) against the dev server and real Consul: at most
// `limit` holders across instances and across the threads of one, a dead holder's permit freed
// no sooner than its lock-delay, the limit checked against Consul's, a TryLock that gives up
// taking nothing, a lost take reply, fencing and loss.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"
#include "lock/consul_semaphore.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"

namespace registry::lock::testing {
namespace {

using ::testing::HasSubstr;

// One instance using the semaphore: a repository, its manager and the semaphore.
struct Instance {
  std::unique_ptr<ConsulRepository> repository;
  std::unique_ptr<LockManager> manager;
  std::shared_ptr<DistributedLock> semaphore;
};

class SemaphoreTest : public LockTest {
 protected:
  Instance NewInstance(const std::string& name, int limit, LockManagerOptions options = {}) {
    Instance instance;
    instance.repository = NewRepository();
    instance.manager = NewManager(*instance.repository, std::move(options));
    absl::StatusOr<std::shared_ptr<DistributedLock>> semaphore =
        instance.manager->GetSemaphore(name, limit);
    EXPECT_TRUE(semaphore.ok()) << semaphore.status();
    if (semaphore.ok()) instance.semaphore = *semaphore;
    return instance;
  }

  std::string Prefix(const std::string& name) {
    return absl::StrCat(RepositoryOptions().namespace_name, "/semaphore/", name, "/");
  }
  // The holders' entries (keys bound to a session) of the semaphore `name`.
  std::vector<consul::DirEntry> Bound(const std::string& name) {
    absl::StatusOr<consul::KvListResult> listed = raw().KvList(Prefix(name));
    EXPECT_TRUE(listed.ok()) << listed.status();
    std::vector<consul::DirEntry> bound;
    if (!listed.ok()) return bound;
    for (consul::DirEntry& entry : listed->entries) {
      if (!entry.session.empty()) bound.push_back(std::move(entry));
    }
    return bound;
  }
  size_t Entries(const std::string& name) { return Bound(name).size(); }
  // The holders record of the semaphore `name`.
  SemaphoreRecord Record(const std::string& name) {
    absl::StatusOr<consul::KvGetResult> read = raw().KvGet(Prefix(name));
    EXPECT_TRUE(read.ok() && read->entry.has_value()) << read.status();
    if (!read.ok() || !read->entry.has_value()) return {};
    absl::StatusOr<SemaphoreRecord> record = ParseSemaphoreRecord(read->entry->value);
    EXPECT_TRUE(record.ok()) << record.status();
    return record.ok() ? *record : SemaphoreRecord();
  }
  // The session of a holder's entry of the semaphore `name` ("" if none).
  std::string EntrySession(const std::string& name) {
    std::vector<consul::DirEntry> bound = Bound(name);
    return bound.empty() ? "" : bound[0].session;
  }
};

class SemaphoreFaultsTest : public registry::testing::DevServerOnly<SemaphoreTest> {};

TEST_F(SemaphoreFaultsTest, UncontendedLockAndUnlockCostThreeRequests) {
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // only what a lock and an unlock cost
  Instance instance = NewInstance("pool", 3, options);
  ASSERT_TRUE(instance.semaphore->Lock().ok());  // first use: creates the instance session
  ASSERT_TRUE(instance.semaphore->Unlock().ok());
  server().ResetRequestCounts();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(instance.semaphore->Lock().ok());
    ASSERT_TRUE(instance.semaphore->Unlock().ok());
  }
  // A read of the tree, the take and the release's delete per cycle.
  EXPECT_EQ(Requests("kv.get"), 5u);
  EXPECT_EQ(Requests("txn"), 10u);
  EXPECT_EQ(Requests("session.create"), 0u);
  EXPECT_EQ(Entries("pool"), 0u);
  EXPECT_LE(Record("pool").holders.size(), 3u);  // released holders are pruned when needed
}

TEST_F(SemaphoreFaultsTest, ATakeWhoseReplyWasLostHoldsOnePermit) {
  Instance instance = NewInstance("lost-reply", 2);
  server().DropNextReplies(1, "/v1/txn", "PUT");  // the take is applied, its reply lost
  ASSERT_TRUE(instance.semaphore->Lock().ok());
  EXPECT_EQ(Entries("lost-reply"), 1u);
  EXPECT_EQ(Record("lost-reply").holders.size(), 1u);
  ASSERT_TRUE(instance.semaphore->Unlock().ok());
  EXPECT_EQ(Entries("lost-reply"), 0u);
}

TEST_F(SemaphoreTest, AtMostLimitInstancesHoldItAtOnce) {
  Instance first = NewInstance("two", 2);
  Instance second = NewInstance("two", 2);
  Instance third = NewInstance("two", 2);
  ASSERT_TRUE(first.semaphore->Lock().ok());
  ASSERT_TRUE(second.semaphore->Lock().ok());
  absl::StatusOr<bool> acquired = third.semaphore->TryLock(absl::Milliseconds(300));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  EXPECT_EQ(Entries("two"), 2u);
  // A release wakes the waiter, which prunes the released holder from the record.
  absl::Notification waiter_holds;
  absl::Notification let_go;
  std::thread waiter([&] {
    absl::StatusOr<bool> waited = third.semaphore->TryLock(kPatience);
    ASSERT_TRUE(waited.ok() && *waited) << waited.status();
    waiter_holds.Notify();
    let_go.WaitForNotification();
    EXPECT_TRUE(third.semaphore->Unlock().ok());
  });
  ASSERT_TRUE(first.semaphore->Unlock().ok());
  ASSERT_TRUE(waiter_holds.WaitForNotificationWithTimeout(kPatience));
  EXPECT_EQ(Entries("two"), 2u);
  EXPECT_EQ(Record("two").holders.size(), 2u);
  // The permit belongs to the waiter's thread, not to this one.
  EXPECT_FALSE(third.semaphore->IsHeldByCurrentThread());
  let_go.Notify();
  waiter.join();
  EXPECT_TRUE(second.semaphore->Unlock().ok());
  EXPECT_EQ(Entries("two"), 0u);
}

TEST_F(SemaphoreTest, ThreadsOfOneInstanceEachTakeAPermit) {
  Instance instance = NewInstance("threads", 2);
  Instance other = NewInstance("threads", 2);
  absl::Notification both_hold;
  absl::Notification let_go;
  std::vector<std::thread> holders;
  std::atomic<int> holding{0};
  // Every thread is joined whatever happens (a failed Lock() notifies too), so that a failure
  // is reported, with its status, rather than ending the process.
  std::atomic<bool> failed{false};
  for (int i = 0; i < 2; ++i) {
    holders.emplace_back([&] {
      absl::Status locked = instance.semaphore->Lock();
      EXPECT_TRUE(locked.ok()) << locked;
      if (!locked.ok()) {
        if (!failed.exchange(true)) both_hold.Notify();
        return;
      }
      EXPECT_EQ(instance.semaphore->HoldCount(), 1);
      if (++holding == 2) both_hold.Notify();
      let_go.WaitForNotification();
      EXPECT_TRUE(instance.semaphore->Unlock().ok());
    });
  }
  const bool notified = both_hold.WaitForNotificationWithTimeout(kPatience);
  if (!notified || failed) {
    let_go.Notify();
    for (std::thread& holder : holders) holder.join();
    FAIL() << (notified ? "a Lock() failed" : "the two permits were not both held in time");
  }
  EXPECT_EQ(Entries("threads"), 2u);
  // A third thread of the instance waits in tier 1, without a request; the other instance
  // waits in Consul.
  std::thread third([&] {
    absl::StatusOr<bool> acquired = instance.semaphore->TryLock(kPatience);
    ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
    EXPECT_TRUE(instance.semaphore->Unlock().ok());
  });
  ASSERT_TRUE(Eventually([&] { return TwoTierOf(*instance.semaphore).QueueLength() == 1; }));
  absl::StatusOr<bool> acquired = other.semaphore->TryLock(absl::Milliseconds(200));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  let_go.Notify();
  for (std::thread& holder : holders) holder.join();
  third.join();
}

TEST_F(SemaphoreTest, APermitWhoseSessionEndedIsFreedNoSoonerThanTheLockDelay) {
  Instance holder = NewInstance("dead-holder", 1);
  Instance waiter = NewInstance("dead-holder", 1);
  LossRecorder losses;
  holder.semaphore->AddLostListener(losses.Listener());
  ASSERT_TRUE(holder.semaphore->Lock().ok());
  const std::string session = EntrySession("dead-holder");
  ASSERT_FALSE(session.empty());
  // The holder's instance dies: Consul ends its session and deletes its entry. The waiter may
  // prune it only once the entry's lock-delay is over: until then the old holder may not know
  // that it lost its permit.
  const absl::Time destroyed = absl::Now();
  ASSERT_TRUE(raw().DestroySession(session).ok());
  absl::StatusOr<bool> acquired = waiter.semaphore->TryLock(kPatience);
  const absl::Time acquired_at = absl::Now();
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  EXPECT_GE(acquired_at - destroyed, kLockDelay);
  EXPECT_EQ(Record("dead-holder").holders.size(), 1u);  // the dead holder pruned
  EXPECT_TRUE(losses.AwaitCount(1));
  EXPECT_TRUE(waiter.semaphore->Unlock().ok());
  EXPECT_TRUE(holder.semaphore->Unlock().ok());  // ends the lost hold locally
}

TEST_F(SemaphoreTest, ALimitThatDisagreesWithHoldersInConsulIsAnErrorNamingBoth) {
  Instance holder = NewInstance("limits", 2);
  Instance other = NewInstance("limits", 3);
  ASSERT_TRUE(holder.semaphore->Lock().ok());
  absl::StatusOr<bool> acquired = other.semaphore->TryLock(absl::Seconds(1));
  ASSERT_FALSE(acquired.ok());
  EXPECT_EQ(acquired.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(acquired.status().message(), HasSubstr("limit in Consul is 2"));
  EXPECT_THAT(acquired.status().message(), HasSubstr("asked for 3"));
  ASSERT_TRUE(holder.semaphore->Unlock().ok());
  // Nobody holds it now: the new limit replaces the old.
  ASSERT_TRUE(other.semaphore->Lock().ok());
  EXPECT_EQ(Record("limits").limit, 3);
  EXPECT_TRUE(other.semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, TryLockThatGivesUpTakesNothing) {
  Instance holder = NewInstance("give-up", 1);
  Instance waiter = NewInstance("give-up", 1);
  const absl::Status locked = holder.semaphore->Lock();
  ASSERT_TRUE(locked.ok()) << locked;  // failed once in CI (ASan, TLS agent), reason unknown
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> acquired = waiter.semaphore->TryLock(absl::Milliseconds(300));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(Entries("give-up"), 1u);
  EXPECT_EQ(Record("give-up").holders.size(), 1u);
  ASSERT_TRUE(holder.semaphore->Unlock().ok());
  acquired = waiter.semaphore->TryLock(kPatience);
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  EXPECT_TRUE(waiter.semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, FencedWritesLandWhileHeldAndAHoldWhoseEntryIsDeletedIsLost) {
  Instance instance = NewInstance("fenced", 2);
  LossRecorder losses;
  instance.semaphore->AddLostListener(losses.Listener());
  ASSERT_TRUE(instance.semaphore->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*instance.semaphore, "/metadata/v", "1").ok());
  EXPECT_EQ(instance.repository->Get("/metadata/v").value(), "1");
  // Someone deletes the semaphore's tree: the hold's key watch reports it lost, and Consul
  // refuses further fenced writes.
  absl::StatusOr<bool> deleted = raw().KvDelete(Prefix("fenced"), {.recurse = true});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_TRUE(losses.AwaitCount(1));
  EXPECT_THAT(losses.reasons()[0], HasSubstr("was deleted"));
  EXPECT_TRUE(instance.semaphore->lost());
  absl::Status refused = PersistIfHeld(*instance.semaphore, "/metadata/v", "2");
  EXPECT_TRUE(absl::IsAborted(refused)) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("under semaphore 'fenced'"));
  EXPECT_EQ(instance.repository->Get("/metadata/v").value(), "1");
  EXPECT_TRUE(instance.semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, ASemaphoreAndALockOfTheSameNameAreApart) {
  Instance instance = NewInstance("shared-name", 1);
  std::shared_ptr<DistributedLock> mutex = GetLock(*instance.manager, "shared-name");
  EXPECT_NE(TwoTierOf(*mutex).consul_key(), TwoTierOf(*instance.semaphore).consul_key());
  ASSERT_TRUE(instance.semaphore->Lock().ok());
  absl::StatusOr<bool> both = mutex->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(both.ok() && *both) << both.status();
  EXPECT_TRUE(mutex->Unlock().ok());
  EXPECT_TRUE(instance.semaphore->Unlock().ok());
}

}  // namespace
}  // namespace registry::lock::testing
