// SPDX-License-Identifier: Apache-2.0
// Dispatcher as the repository's serial executor: no thread before work, posted tasks in order
// (those left at Stop() run on the stopping thread), and the supervisor hand-over a lending
// owner relies on (SetSupervisor).
#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "integration/testing/eventually.h"
#include "watch/dispatcher.h"

namespace registry::watch {
namespace {

using registry::testing::Eventually;
using registry::testing::kPatience;

TEST(DispatcherTasksTest, StartsNoThreadBeforeItHasWork) {
  Dispatcher dispatcher({});
  dispatcher.Add(1, [](const DataChangedEvent&) {});
  EXPECT_EQ(dispatcher.worker_count(), 0u);
  absl::Notification ran;
  ASSERT_TRUE(dispatcher.Post([&] { ran.Notify(); }));
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(kPatience));
  EXPECT_EQ(dispatcher.worker_count(), 1u);
}

TEST(DispatcherTasksTest, StopWithoutEverHavingWorkJoinsNothingAndRefusesLaterTasks) {
  Dispatcher dispatcher({});
  dispatcher.Stop();
  EXPECT_EQ(dispatcher.worker_count(), 0u);
  EXPECT_FALSE(dispatcher.Post([] {}));
}

TEST(DispatcherTasksTest, TasksRunInOrderAndThoseLeftAtStopRunOnTheStoppingThread) {
  Dispatcher dispatcher({});
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  absl::Notification first_running;
  absl::Notification release_first;
  // The first task holds the queue until Stop() has begun, so that the others are pending then.
  ASSERT_TRUE(dispatcher.Post([&] {
    first_running.Notify();
    release_first.WaitForNotificationWithTimeout(kPatience);
  }));
  ASSERT_TRUE(first_running.WaitForNotificationWithTimeout(kPatience));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(dispatcher.Post([&, i] {
      absl::MutexLock lock(&mu);
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
    }));
  }
  std::thread::id stopping;
  std::thread stopper([&] {
    stopping = std::this_thread::get_id();
    dispatcher.Stop();
  });
  // Stop() refuses new tasks before it waits for the running one.
  EXPECT_TRUE(Eventually([&] { return !dispatcher.Post([] {}); }));
  release_first.Notify();
  stopper.join();
  std::vector<int> expected(50);
  for (int i = 0; i < 50; ++i) expected[i] = i;
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, expected);
  for (std::thread::id thread : threads) EXPECT_EQ(thread, stopping);
  EXPECT_FALSE(dispatcher.Post([] {}));
}

TEST(DispatcherTasksTest, InTaskIsTrueOnlyInsideAPostedTask) {
  Dispatcher dispatcher({});
  dispatcher.Add(1, [&](const DataChangedEvent&) { EXPECT_FALSE(dispatcher.InTask()); });
  EXPECT_FALSE(dispatcher.InTask());
  std::atomic<bool> inside{false};
  absl::Notification ran;
  ASSERT_TRUE(dispatcher.Post([&] {
    inside = dispatcher.InTask();
    ran.Notify();
  }));
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(kPatience));
  EXPECT_TRUE(inside);
}

// A watch engine supervises a lent dispatcher and withdraws at Close(); once SetSupervisor()
// returns, the old supervisor is never called again (its eventfd may be gone).
class SupervisorHandOverTest : public ::testing::Test {
 protected:
  static constexpr int kRounds = 3;

  SupervisorHandOverTest() : dispatcher_({}, [this] { ++first_calls_; }) {
    dispatcher_.Add(1, [this](const DataChangedEvent&) {
      Round& round = rounds_[round_.load()];
      round.blocked.Notify();
      round.release.WaitForNotificationWithTimeout(kPatience);
    });
    dispatcher_.Add(2,
                    [this](const DataChangedEvent&) { rounds_[round_.load()].drained.Notify(); });
  }
  ~SupervisorHandOverTest() override { dispatcher_.Stop(); }

  // Queues work behind a busy worker with no check planned, which is what wakes a supervisor,
  // then lets the worker drain the queue and clears the planned check.
  void WorkBehindABusyWorker() {
    Round& round = rounds_[round_.load()];
    dispatcher_.Enqueue(1, {DataChangedEvent{}});
    ASSERT_TRUE(round.blocked.WaitForNotificationWithTimeout(kPatience));
    dispatcher_.Enqueue(2, {DataChangedEvent{}});
    round.release.Notify();
    ASSERT_TRUE(round.drained.WaitForNotificationWithTimeout(kPatience));
    dispatcher_.Supervise(absl::InfiniteFuture());  // nothing waits: no check planned
    ++round_;                                       // the worker is idle: no listener reads it now
  }

  struct Round {
    absl::Notification blocked;
    absl::Notification release;
    absl::Notification drained;
  };
  Round rounds_[kRounds];
  std::atomic<int> round_{0};
  std::atomic<int> first_calls_{0};
  std::atomic<int> second_calls_{0};
  Dispatcher dispatcher_;  // last: stopped and joined before what its listeners use goes
};

TEST_F(SupervisorHandOverTest, ReplacedSupervisorIsNeverCalledAgain) {
  WorkBehindABusyWorker();
  const int first = first_calls_.load();
  EXPECT_GE(first, 1);
  dispatcher_.SetSupervisor([this] { ++second_calls_; });
  WorkBehindABusyWorker();
  EXPECT_EQ(first_calls_.load(), first);
  const int second = second_calls_.load();
  EXPECT_GE(second, 1);
  dispatcher_.SetSupervisor(nullptr);
  WorkBehindABusyWorker();
  EXPECT_EQ(first_calls_.load(), first);
  EXPECT_EQ(second_calls_.load(), second);
}

}  // namespace
}  // namespace registry::watch
