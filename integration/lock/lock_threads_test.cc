// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_threads_test.cc
//
// Where background work runs: a held lock key is a key watch on the repository's watch engine,
// lost listeners and connection events are tasks on its serial executor, so a repository with a
// session, watches and locks runs three background threads (two when nothing watches), and the
// losses a closing repository reports are delivered before Close() returns.
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"

namespace registry::lock::testing {
namespace {

using registry::testing::Eventually;
using registry::testing::ProcessThreadCount;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(LockTest, ARepositoryWithASessionWatchesAndAHeldLockRunsThreeBackgroundThreads) {
  const int before = ProcessThreadCount();
  {
    auto repository = NewRepository();
    ASSERT_TRUE(repository->PersistEphemeral("/instances/a", "up").ok());
    ASSERT_TRUE(repository->Watch("/metadata", [](const DataChangedEvent&) {}).ok());
    LockManagerOptions options;
    options.monitor_delay = absl::ZeroDuration();
    auto manager = NewManager(*repository, options);
    auto lock = GetLock(*manager, "counted");
    ASSERT_TRUE(lock->Lock().ok());
    // Renewal, watch IO (watches and the held key), one listener worker. A temporary extra
    // worker, started if a loaded machine stalls a listener, retires once idle.
    EXPECT_TRUE(Eventually([&] { return ProcessThreadCount() == before + 3; }))
        << ProcessThreadCount() - before << " background threads";

    // A lost session starts the restorer, which ends once the key is bound to the new session.
    const std::optional<std::string> first = KeySession("locks/instances/a");
    ASSERT_TRUE(first.has_value() && !first->empty());
    ASSERT_TRUE(ExpireSession(*first).ok());
    ASSERT_TRUE(Eventually([&] {
      const std::optional<std::string> now = KeySession("locks/instances/a");
      return now.has_value() && !now->empty() && *now != *first;
    }));
    EXPECT_TRUE(Eventually([&] { return ProcessThreadCount() == before + 3; }))
        << ProcessThreadCount() - before << " background threads after a restore";
    EXPECT_TRUE(lock->lost());
    EXPECT_TRUE(lock->Unlock().ok());
  }
  EXPECT_TRUE(Eventually([&] { return ProcessThreadCount() == before; }))
      << ProcessThreadCount() - before << " threads left after the repository is gone";
}

TEST_F(LockTest, ARepositoryThatNeverWatchesRunsNoIoThread) {
  const int before = ProcessThreadCount();
  auto repository = NewRepository();
  EXPECT_EQ(ProcessThreadCount(), before);  // nothing runs before it is needed
  ASSERT_TRUE(repository->PersistEphemeral("/instances/a", "up").ok());
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // no key watch of the held lock
  auto manager = NewManager(*repository, options);
  auto lock = GetLock(*manager, "unwatched");
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(lock->Unlock().ok());
  // Renewal and the executor's worker (which told the session observers of the new session).
  EXPECT_TRUE(Eventually([&] { return ProcessThreadCount() == before + 2; }))
      << ProcessThreadCount() - before << " background threads";
  EXPECT_EQ(ProcessThreadCount(), before + 2) << "no IO thread: nothing is watched";
}

TEST_F(LockFaultsTest, AMonitoredLockAddsNoThreadToARepositoryThatWatches) {
  const int before = ProcessThreadCount();
  auto repository = NewRepository();
  // A watch starts the engine; a lock makes the instance session (and the renewal thread).
  ASSERT_TRUE(repository->Watch("/metadata", [](const DataChangedEvent&) {}).ok());
  LockManagerOptions options;
  options.monitor_delay = absl::ZeroDuration();
  auto manager = NewManager(*repository, options);
  auto warm_up = GetLock(*manager, "warm-up");
  ASSERT_TRUE(warm_up->Lock().ok());
  ASSERT_TRUE(warm_up->Unlock().ok());
  // Compared once any temporary extra listener worker (a loaded machine may start one) retired.
  auto steady = [&] { return Eventually([&] { return ProcessThreadCount() == before + 3; }); };
  ASSERT_TRUE(steady()) << ProcessThreadCount() - before << " background threads";

  auto lock = GetLock(*manager, "watched");
  absl::Mutex mu;
  std::thread::id listener_thread;
  std::string reason;
  lock->AddLostListener([&](const std::string&, const absl::Status& status) {
    absl::MutexLock hold(&mu);
    listener_thread = std::this_thread::get_id();
    reason = std::string(status.message());
  });
  server().ResetRequestCounts();
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(Eventually([&] { return Requests("kv.get") >= 1; }));
  EXPECT_TRUE(steady()) << ProcessThreadCount() - before << " background threads";

  ASSERT_TRUE(raw().KvDelete(TwoTierOf(*lock).consul_key()).ok());
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock hold(&mu);
    return !reason.empty();
  }));
  {
    absl::MutexLock hold(&mu);
    EXPECT_THAT(reason, HasSubstr("deleted"));
    EXPECT_NE(listener_thread, std::this_thread::get_id());
  }
  EXPECT_TRUE(steady()) << ProcessThreadCount() - before << " background threads";
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockTest, LossesReportedByClosingTheRepositoryAreDeliveredBeforeCloseReturns) {
  auto repository = NewRepository();
  auto manager = NewManager(*repository);
  auto first = GetLock(*manager, "first");
  auto second = GetLock(*manager, "second");
  LossRecorder losses;
  first->AddLostListener(losses.Listener());
  second->AddLostListener(losses.Listener());
  ASSERT_TRUE(first->Lock().ok());
  ASSERT_TRUE(second->Lock().ok());

  ASSERT_TRUE(repository->Close().ok());
  EXPECT_THAT(losses.reasons(), ElementsAre(HasSubstr("closed"), HasSubstr("closed")));
  EXPECT_TRUE(first->lost());
  EXPECT_TRUE(first->Unlock().ok());
  EXPECT_TRUE(second->Unlock().ok());
}

TEST_F(LockTest, AManagerDestroyedInsideALostListenerDoesNotWaitForTheListenersBehindIt) {
  auto repository = NewRepository();
  LockManagerOptions options;
  options.monitor_delay = absl::InfiniteDuration();  // losses come from the session, together
  std::unique_ptr<LockManager> manager = NewManager(*repository, options);
  auto first = GetLock(*manager, "a-first");
  auto second = GetLock(*manager, "b-second");
  absl::Notification destroyed;
  first->AddLostListener([&](const std::string&, const absl::Status&) {
    manager.reset();  // the second lock's loss is queued behind this call
    destroyed.Notify();
  });
  LossRecorder second_losses;
  second->AddLostListener(second_losses.Listener());
  ASSERT_TRUE(first->Lock().ok());
  ASSERT_TRUE(second->Lock().ok());

  ASSERT_TRUE(ExpireSession(HolderOf(*first)).ok());
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(kPatience));
  EXPECT_TRUE(second_losses.AwaitCount(1));
  EXPECT_TRUE(first->Unlock().ok());
  EXPECT_TRUE(second->Unlock().ok());
}

}  // namespace
}  // namespace registry::lock::testing
