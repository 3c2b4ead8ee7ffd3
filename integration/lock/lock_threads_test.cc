// integration/lock/lock_threads_test.cc
//
// Where lock work runs: a held lock key is a key watch on the repository's watch engine, lost
// listeners are tasks on its workers, so locks add no thread of their own, and the losses a
// closing repository reports are delivered before Close() returns.
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"
#include "lock/lock_manager.h"

namespace registry::lock::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using registry::testing::ProcessThreadCount;

TEST_F(LockFaultsTest, AMonitoredLockAddsNoThreadToARepositoryThatWatches) {
  auto repository = NewRepository();
  // A watch starts the engine; a lock makes the instance session (and the keeper's threads).
  ASSERT_TRUE(repository->Watch("/metadata", [](const DataChangedEvent&) {}).ok());
  LockManagerOptions options;
  options.monitor_delay = absl::ZeroDuration();
  auto manager = NewManager(*repository, options);
  auto warm_up = GetLock(*manager, "warm-up");
  ASSERT_TRUE(warm_up->Lock().ok());
  ASSERT_TRUE(warm_up->Unlock().ok());
  const int threads = ProcessThreadCount();

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
  ASSERT_TRUE(registry::testing::Eventually([&] { return Requests("kv.get") >= 1; }));
  EXPECT_EQ(ProcessThreadCount(), threads);

  ASSERT_TRUE(raw().KvDelete(lock->consul_key()).ok());
  ASSERT_TRUE(registry::testing::Eventually([&] {
    absl::MutexLock hold(&mu);
    return !reason.empty();
  }));
  {
    absl::MutexLock hold(&mu);
    EXPECT_THAT(reason, HasSubstr("deleted"));
    EXPECT_NE(listener_thread, std::this_thread::get_id());
  }
  EXPECT_EQ(ProcessThreadCount(), threads);
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

}  // namespace
}  // namespace registry::lock::testing
