// SPDX-License-Identifier: Apache-2.0
// integration/lock/rw_lock_test.cc
//
// The read/write lock (LockManager::GetReadLock / GetWriteLock) against the dev server and real
// Consul: readers of several instances hold it at once, a writer waits for them and holds back
// the readers that come after it, a writer that gives up lets them in, an upgrade is refused,
// a dead writer is pruned no sooner than its lock-delay, and fenced writes.
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
#include "lock/consul_rw_lock.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"

namespace registry::lock::testing {
namespace {

using ::testing::HasSubstr;

// One instance using the read/write lock: a repository, its manager and both sides.
struct Instance {
  std::unique_ptr<ConsulRepository> repository;
  std::unique_ptr<LockManager> manager;
  std::shared_ptr<DistributedLock> read;
  std::shared_ptr<DistributedLock> write;
};

class RwLockTest : public LockTest {
 protected:
  Instance NewInstance(const std::string& name, LockManagerOptions options = {}) {
    Instance instance;
    instance.repository = NewRepository();
    instance.manager = NewManager(*instance.repository, std::move(options));
    absl::StatusOr<std::shared_ptr<DistributedLock>> read = instance.manager->GetReadLock(name);
    absl::StatusOr<std::shared_ptr<DistributedLock>> write = instance.manager->GetWriteLock(name);
    EXPECT_TRUE(read.ok() && write.ok()) << read.status() << write.status();
    if (read.ok()) instance.read = *read;
    if (write.ok()) instance.write = *write;
    return instance;
  }

  std::string Prefix(const std::string& name) {
    return absl::StrCat(RepositoryOptions().namespace_name, "/rwlock/", name, "/");
  }
  // The record of the read/write lock `name` (empty if absent).
  RwRecord Record(const std::string& name) {
    absl::StatusOr<consul::KvGetResult> read = raw().KvGet(Prefix(name));
    EXPECT_TRUE(read.ok()) << read.status();
    if (!read.ok() || !read->entry.has_value()) return {};
    absl::StatusOr<RwRecord> record = ParseRwRecord(read->entry->value);
    EXPECT_TRUE(record.ok()) << record.status();
    return record.ok() ? *record : RwRecord();
  }
  // The session of the entry named `name` of the read/write lock `lock`.
  std::string SessionOf(const std::string& lock, const std::string& name) {
    absl::StatusOr<consul::KvGetResult> read = raw().KvGet(absl::StrCat(Prefix(lock), name, "/"));
    EXPECT_TRUE(read.ok() && read->entry.has_value()) << read.status();
    return read.ok() && read->entry.has_value() ? read->entry->session : "";
  }
};

class RwLockFaultsTest : public registry::testing::DevServerOnly<RwLockTest> {};

TEST_F(RwLockFaultsTest, UncontendedReadOrWriteCostsThreeRequests) {
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // only what a lock and an unlock cost
  Instance instance = NewInstance("cost", options);
  ASSERT_TRUE(instance.write->Lock().ok());  // first use: creates the instance session
  ASSERT_TRUE(instance.write->Unlock().ok());
  for (DistributedLock* side : {instance.read.get(), instance.write.get()}) {
    server().ResetRequestCounts();
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(side->Lock().ok());
      ASSERT_TRUE(side->Unlock().ok());
    }
    // A read of the tree, the take and the release's delete per cycle.
    EXPECT_EQ(Requests("kv.get"), 5u) << TwoTierOf(*side).consul_key();
    EXPECT_EQ(Requests("txn"), 10u);
  }
}

TEST_F(RwLockTest, ReadersShareItAndAWaitingWriterHoldsBackLaterReaders) {
  Instance first = NewInstance("shared");
  Instance second = NewInstance("shared");
  Instance writer = NewInstance("shared");
  Instance late = NewInstance("shared");
  ASSERT_TRUE(first.read->Lock().ok());
  absl::StatusOr<bool> both = second.read->TryLock(kPatience);
  ASSERT_TRUE(both.ok() && *both) << both.status();
  EXPECT_EQ(Record("shared").readers.size(), 2u);
  absl::Notification writer_holds;
  absl::Notification let_go;
  std::thread writing([&] {
    absl::StatusOr<bool> acquired = writer.write->TryLock(kPatience);
    ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
    writer_holds.Notify();
    let_go.WaitForNotification();
    EXPECT_TRUE(writer.write->Unlock().ok());
  });
  ASSERT_TRUE(Eventually([&] { return Record("shared").waiting.size() == 1; }));
  // Only readers hold, but a writer waits: a later reader waits behind it.
  absl::StatusOr<bool> held_back = late.read->TryLock(absl::Milliseconds(300));
  ASSERT_TRUE(held_back.ok()) << held_back.status();
  EXPECT_FALSE(*held_back);
  EXPECT_FALSE(writer_holds.HasBeenNotified());
  ASSERT_TRUE(first.read->Unlock().ok());
  EXPECT_FALSE(writer_holds.HasBeenNotified());  // one reader still holds
  ASSERT_TRUE(second.read->Unlock().ok());
  ASSERT_TRUE(writer_holds.WaitForNotificationWithTimeout(kPatience));
  const RwRecord record = Record("shared");
  EXPECT_FALSE(record.writer.empty());
  EXPECT_TRUE(record.readers.empty());  // the writer pruned the readers that left
  let_go.Notify();
  writing.join();
  absl::StatusOr<bool> after = late.read->TryLock(kPatience);
  ASSERT_TRUE(after.ok() && *after) << after.status();
  EXPECT_TRUE(late.read->Unlock().ok());
}

TEST_F(RwLockTest, AWriterThatGivesUpLetsReadersIn) {
  Instance reader = NewInstance("give-up");
  Instance writer = NewInstance("give-up");
  Instance late = NewInstance("give-up");
  ASSERT_TRUE(reader.read->Lock().ok());
  absl::StatusOr<bool> acquired = writer.write->TryLock(absl::Milliseconds(300));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  // Its entry is deleted by a task of its manager; the name left in "Waiting" is then dropped.
  absl::StatusOr<bool> read = late.read->TryLock(kPatience);
  ASSERT_TRUE(read.ok() && *read) << read.status();
  EXPECT_TRUE(Record("give-up").waiting.empty());
  EXPECT_TRUE(late.read->Unlock().ok());
  EXPECT_TRUE(reader.read->Unlock().ok());
}

TEST_F(RwLockTest, AThreadHoldingOneSideIsRefusedTheOther) {
  Instance instance = NewInstance("upgrade");
  ASSERT_TRUE(instance.read->Lock().ok());
  absl::StatusOr<bool> upgrade = instance.write->TryLock(absl::Seconds(1));
  EXPECT_EQ(upgrade.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(upgrade.status().message(), HasSubstr("this thread holds the read lock"));
  ASSERT_TRUE(instance.read->Unlock().ok());
  ASSERT_TRUE(instance.write->Lock().ok());
  absl::Status downgrade = instance.read->Lock();
  EXPECT_EQ(downgrade.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(downgrade.message(), HasSubstr("this thread holds the write lock"));
  EXPECT_TRUE(instance.write->Unlock().ok());
}

TEST_F(RwLockTest, AWriterWhoseSessionEndedIsPrunedNoSoonerThanTheLockDelay) {
  Instance writer = NewInstance("dead-writer");
  Instance reader = NewInstance("dead-writer");
  LossRecorder losses;
  writer.write->AddLostListener(losses.Listener());
  ASSERT_TRUE(writer.write->Lock().ok());
  const std::string session = SessionOf("dead-writer", Record("dead-writer").writer);
  ASSERT_FALSE(session.empty());
  const absl::Time destroyed = absl::Now();
  ASSERT_TRUE(raw().DestroySession(session).ok());
  absl::StatusOr<bool> acquired = reader.read->TryLock(kPatience);
  const absl::Time acquired_at = absl::Now();
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  // The old writer may not know yet that it lost the lock: the lock-delay covers it.
  EXPECT_GE(acquired_at - destroyed, kLockDelay);
  EXPECT_TRUE(Record("dead-writer").writer.empty());
  EXPECT_TRUE(losses.AwaitCount(1));
  EXPECT_TRUE(reader.read->Unlock().ok());
  EXPECT_TRUE(writer.write->Unlock().ok());  // ends the lost hold locally
}

TEST_F(RwLockTest, FencedWritesLandUnderTheWriteLockOnly) {
  Instance instance = NewInstance("fenced");
  ASSERT_TRUE(instance.write->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*instance.write, "/metadata/v", "1").ok());
  EXPECT_EQ(instance.repository->Get("/metadata/v").value(), "1");
  ASSERT_TRUE(instance.write->Unlock().ok());
  absl::Status refused = PersistIfHeld(*instance.write, "/metadata/v", "2");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("under write lock 'fenced'"));
  EXPECT_EQ(instance.repository->Get("/metadata/v").value(), "1");
}

}  // namespace
}  // namespace registry::lock::testing
