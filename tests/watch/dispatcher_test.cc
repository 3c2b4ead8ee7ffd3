// SPDX-License-Identifier: Apache-2.0
// Dispatcher: per-watch order and serialisation, isolation of slow listeners, Remove and Stop
// guarantees.
#include "watch/dispatcher.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/monotonic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/eventually.h"

namespace registry::watch {
namespace {

using registry::testing::Eventually;
using registry::testing::kPatience;

std::vector<DataChangedEvent> Events(const std::string& prefix, int count) {
  std::vector<DataChangedEvent> events;
  for (int i = 0; i < count; ++i) {
    DataChangedEvent event;
    event.key = absl::StrCat(prefix, i);
    event.value = "v";
    events.push_back(event);
  }
  return events;
}

// Plays the engine's IO thread: calls Supervise() when woken or when it asked to be.
class Supervisor {
 public:
  std::function<void()> Waker() {
    return [this] {
      absl::MutexLock lock(&mu_);
      woken_ = true;
    };
  }
  void Start(Dispatcher* dispatcher) {
    thread_ = std::thread([this, dispatcher] {
      absl::Time next = absl::InfiniteFuture();
      absl::MutexLock lock(&mu_);
      while (!stop_) {
        auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return woken_ || stop_; };
        mu_.AwaitWithTimeout(absl::Condition(&ready),
                             std::min(next - MonotonicNow(), absl::Milliseconds(20)));
        woken_ = false;
        mu_.Unlock();
        next = dispatcher->Supervise(MonotonicNow());
        mu_.Lock();
      }
    });
  }
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }
  ~Supervisor() { Stop(); }

 private:
  absl::Mutex mu_;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

DispatcherOptions FastOptions() {
  DispatcherOptions options;
  options.stall_threshold = absl::Milliseconds(20);
  options.idle_retire = absl::Milliseconds(50);
  options.batch_size = 4;
  return options;
}

class Recorder {
 public:
  DataChangedListener Listener(absl::Duration delay = absl::ZeroDuration()) {
    return [this, delay](const DataChangedEvent& event) {
      if (in_call_.exchange(true)) concurrent_ = true;
      if (delay > absl::ZeroDuration()) absl::SleepFor(delay);  // simulates a slow listener
      {
        absl::MutexLock lock(&mu_);
        keys_.push_back(event.key);
      }
      in_call_ = false;
    };
  }
  bool AwaitCount(size_t count) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return keys_.size() >= count; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), kPatience);
  }
  std::vector<std::string> keys() {
    absl::MutexLock lock(&mu_);
    return keys_;
  }
  bool concurrent() const { return concurrent_; }

 private:
  std::atomic<bool> in_call_{false};
  std::atomic<bool> concurrent_{false};
  absl::Mutex mu_;
  std::vector<std::string> keys_ ABSL_GUARDED_BY(mu_);
};

TEST(DispatcherTest, DeliversEachWatchsEventsInOrder) {
  Recorder recorder;
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), nullptr);
  dispatcher.Add(1, recorder.Listener());
  dispatcher.Enqueue(1, Events("k", 50));
  dispatcher.Enqueue(1, Events("m", 50));
  ASSERT_TRUE(recorder.AwaitCount(100));
  std::vector<std::string> expected;
  for (const auto& event : Events("k", 50)) expected.push_back(event.key);
  for (const auto& event : Events("m", 50)) expected.push_back(event.key);
  EXPECT_EQ(recorder.keys(), expected);
}

TEST(DispatcherTest, NeverRunsOneListenerConcurrentlyEvenWithExtraWorkers) {
  Supervisor supervisor;
  std::vector<std::unique_ptr<Recorder>> recorders;
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), supervisor.Waker());
  supervisor.Start(&dispatcher);
  absl::Cleanup stop_supervisor = [&supervisor] { supervisor.Stop(); };  // before the dispatcher
  for (uint64_t id = 1; id <= 4; ++id) {
    recorders.push_back(std::make_unique<Recorder>());
    dispatcher.Add(id, recorders.back()->Listener(absl::Milliseconds(5)));
  }
  for (int round = 0; round < 5; ++round) {
    for (uint64_t id = 1; id <= 4; ++id) dispatcher.Enqueue(id, Events("k", 4));
  }
  for (auto& recorder : recorders) {
    ASSERT_TRUE(recorder->AwaitCount(20));
    EXPECT_FALSE(recorder->concurrent());
  }
}

TEST(DispatcherTest, BlockedListenerDoesNotStallOtherWatches) {
  Supervisor supervisor;
  absl::Notification entered;
  absl::Notification release;
  Recorder other;
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), supervisor.Waker());
  supervisor.Start(&dispatcher);
  absl::Cleanup stop_supervisor = [&supervisor] { supervisor.Stop(); };  // before the dispatcher
  absl::Cleanup unblock = [&release] {                                   // runs first on any exit
    if (!release.HasBeenNotified()) release.Notify();
  };
  dispatcher.Add(1, [&](const DataChangedEvent&) {
    entered.Notify();
    release.WaitForNotification();
  });
  dispatcher.Add(2, other.Listener());
  dispatcher.Enqueue(1, Events("slow", 1));
  ASSERT_TRUE(entered.WaitForNotificationWithTimeout(kPatience));
  dispatcher.Enqueue(2, Events("fast", 3));
  const bool delivered = other.AwaitCount(3);
  EXPECT_EQ(dispatcher.worker_count(), 2u);
  release.Notify();
  EXPECT_TRUE(delivered);
}

TEST(DispatcherTest, ExtraWorkersRetireWhenIdle) {
  Supervisor supervisor;
  absl::Notification entered;
  absl::Notification release;
  Recorder other;
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), supervisor.Waker());
  supervisor.Start(&dispatcher);
  absl::Cleanup stop_supervisor = [&supervisor] { supervisor.Stop(); };  // before the dispatcher
  absl::Cleanup unblock = [&release] {                                   // runs first on any exit
    if (!release.HasBeenNotified()) release.Notify();
  };
  dispatcher.Add(1, [&](const DataChangedEvent&) {
    entered.Notify();
    release.WaitForNotification();
  });
  dispatcher.Add(2, other.Listener());
  dispatcher.Enqueue(1, Events("slow", 1));
  ASSERT_TRUE(entered.WaitForNotificationWithTimeout(kPatience));
  dispatcher.Enqueue(2, Events("fast", 1));
  ASSERT_TRUE(other.AwaitCount(1));
  release.Notify();
  // Polling: the count has no notification.
  EXPECT_TRUE(Eventually([&] { return dispatcher.worker_count() == 1; }))
      << dispatcher.worker_count() << " workers";
}

TEST(DispatcherTest, RemoveWaitsForTheRunningCallAndNothingRunsAfter) {
  absl::Notification entered;
  std::atomic<bool> finished{false};
  std::atomic<int> calls{0};
  Recorder other;
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), nullptr);
  dispatcher.Add(1, [&](const DataChangedEvent&) {
    ++calls;
    entered.Notify();
    absl::SleepFor(absl::Milliseconds(50));  // Remove must wait for this call to end
    finished = true;
  });
  dispatcher.Enqueue(1, Events("k", 10));
  ASSERT_TRUE(entered.WaitForNotificationWithTimeout(kPatience));
  dispatcher.Remove(1);
  EXPECT_TRUE(finished.load());
  const int calls_at_removal = calls.load();
  dispatcher.Enqueue(1, Events("late", 3));
  // Another watch's events pass through the same worker after any left-over ones of watch 1.
  dispatcher.Add(2, other.Listener());
  dispatcher.Enqueue(2, Events("x", 1));
  ASSERT_TRUE(other.AwaitCount(1));
  EXPECT_EQ(calls.load(), calls_at_removal);
  EXPECT_EQ(calls_at_removal, 1);
}

TEST(DispatcherTest, RemoveFromItsOwnListenerReturnsAndStopsLaterCalls) {
  std::atomic<int> calls{0};
  absl::Notification removed;
  Recorder other;
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), nullptr);
  dispatcher.Add(1, [&](const DataChangedEvent&) {
    ++calls;
    dispatcher.Remove(1);
    removed.Notify();
  });
  dispatcher.Enqueue(1, Events("k", 3));
  ASSERT_TRUE(removed.WaitForNotificationWithTimeout(kPatience));
  dispatcher.Add(2, other.Listener());
  dispatcher.Enqueue(2, Events("x", 1));
  ASSERT_TRUE(other.AwaitCount(1));
  EXPECT_EQ(calls.load(), 1);
}

TEST(DispatcherTest, ThrowingListenerKeepsReceivingEvents) {
  Recorder recorder;
  auto record = recorder.Listener();
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), nullptr);
  dispatcher.Add(1, [&](const DataChangedEvent& event) {
    record(event);
    throw std::runtime_error("listener bug");
  });
  dispatcher.Enqueue(1, Events("k", 3));
  EXPECT_TRUE(recorder.AwaitCount(3));
}

TEST(DispatcherTest, StopFromInsideAListenerReturnsWithoutWaitingForIt) {
  absl::Notification stopped;
  // Declared after what its listeners use: destroyed (and joined) first.
  auto dispatcher = std::make_unique<Dispatcher>(FastOptions(), nullptr);
  dispatcher->Add(1, [&](const DataChangedEvent&) {
    dispatcher->Stop();
    stopped.Notify();
  });
  dispatcher->Enqueue(1, Events("k", 2));
  ASSERT_TRUE(stopped.WaitForNotificationWithTimeout(kPatience));
  dispatcher.reset();  // joins the worker that ran the listener
}

TEST(DispatcherTest, EventsAfterStopAreDropped) {
  std::atomic<int> calls{0};
  // Declared after what its listeners use: destroyed (and joined) first.
  Dispatcher dispatcher(FastOptions(), nullptr);
  dispatcher.Add(1, [&](const DataChangedEvent&) { ++calls; });
  dispatcher.Stop();
  dispatcher.Enqueue(1, Events("k", 3));
  EXPECT_EQ(dispatcher.worker_count(), 0u);
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace registry::watch
