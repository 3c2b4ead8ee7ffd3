// SPDX-License-Identifier: Apache-2.0
// A watch engine on a dispatcher lent by its owner (as a repository lends its serial executor):
// no thread before a watch, listeners on the owner's worker, and a Close() that leaves the owner's
// tasks running.
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "consul/client.h"
#include "gtest/gtest.h"
#include "integration/watch/watch_fixture.h"
#include "watch/dispatcher.h"

namespace registry::watch::testing {
namespace {

class WatchLentDispatcherTest : public WatchTest {
 protected:
  void SetUp() override {
    WatchTest::SetUp();
    consul::ClientOptions options = ClientOptionsForCodeUnderTest();
    options.request_timeout = absl::Seconds(5);
    absl::StatusOr<std::unique_ptr<consul::Client>> client = consul::Client::Create(options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  std::unique_ptr<WatchEngine> NewLentEngine() {
    absl::StatusOr<std::unique_ptr<WatchEngine>> engine =
        WatchEngine::Create(client_.get(), EngineOptions(), &tasks_);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  std::unique_ptr<consul::Client> client_;
  Dispatcher tasks_{DispatcherOptions{}};  // the owner's: outlives the engines of each test
};

TEST_F(WatchLentDispatcherTest, StartsTheIoThreadWithTheFirstWatchOnly) {
  const int threads_before = ProcessThreadCount();
  std::unique_ptr<WatchEngine> engine = NewLentEngine();
  EXPECT_EQ(engine->background_threads(), 0u);
  EXPECT_EQ(ProcessThreadCount(), threads_before);
  Mirror mirror;
  ASSERT_TRUE(engine->Watch("ns/a", mirror.Listener()).ok());
  EXPECT_EQ(engine->background_threads(), 1u);  // the IO thread; the worker is the owner's
  Put("ns/a/k", "v");
  ASSERT_TRUE(mirror.AwaitView({{"/a/k", "v"}}));
  EXPECT_EQ(ProcessThreadCount(), threads_before + 2);
  EXPECT_EQ(tasks_.worker_count(), 1u);
  engine->Close();
}

TEST_F(WatchLentDispatcherTest, CloseRemovesItsListenersAndLeavesTheOwnersTasksRunning) {
  Mirror mirror;
  std::unique_ptr<WatchEngine> engine = NewLentEngine();
  ASSERT_TRUE(engine->Watch("ns/a", mirror.Listener()).ok());
  Put("ns/a/k", "1");
  ASSERT_TRUE(mirror.AwaitView({{"/a/k", "1"}}));
  engine->Close();
  EXPECT_EQ(engine->background_threads(), 0u);
  absl::Notification ran;
  ASSERT_TRUE(tasks_.Post([&] { ran.Notify(); }));
  EXPECT_TRUE(ran.WaitForNotificationWithTimeout(kPatience));
  engine.reset();  // after Close() the engine no longer wakes or uses the dispatcher
  absl::Notification ran_again;
  ASSERT_TRUE(tasks_.Post([&] { ran_again.Notify(); }));
  EXPECT_TRUE(ran_again.WaitForNotificationWithTimeout(kPatience));
  tasks_.Stop();
  EXPECT_EQ(mirror.events().size(), 1u);
}

}  // namespace
}  // namespace registry::watch::testing
