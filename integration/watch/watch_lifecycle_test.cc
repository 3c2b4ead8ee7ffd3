// SPDX-License-Identifier: Apache-2.0
// Remove and Close promptness and guarantees, listener isolation (exceptions, slow listeners),
// and many watches on one IO thread.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/watch/watch_fixture.h"

namespace registry::watch::testing {
namespace {

using ::testing::IsEmpty;

// Long enough that any wait for a parked query to time out would show.
constexpr absl::Duration kLongBlock = absl::Seconds(60);

class WatchLifecycleTest : public WatchTest {};
// Tests that need the dev server's request and connection counts.
class WatchLifecycleFaultsTest : public registry::testing::DevServerOnly<WatchTest> {};

TEST_F(WatchLifecycleTest, RemoveReturnsPromptlyAndNoCallbackFollows) {
  Mirror mirror;
  std::atomic<int> after_remove{0};
  std::atomic<bool> removed{false};
  Mirror other;
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine(EngineOptions(kLongBlock));
  absl::StatusOr<WatchId> id = engine->Watch("ns/a", [&](const DataChangedEvent& event) {
    if (removed.load()) ++after_remove;
    mirror.Listener()(event);
  });
  ASSERT_TRUE(id.ok()) << id.status();
  Put("ns/a/x", "1");
  ASSERT_TRUE(mirror.AwaitEventCount(1));
  absl::Time start = absl::Now();
  engine->Remove(*id);
  removed = true;
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(engine->watch_count(), 0u);
  // A second watch sees a later write; the removed one must not have been called for it.
  ASSERT_TRUE(engine->Watch("ns/a", other.Listener()).ok());
  Put("ns/a/y", "2");
  ASSERT_TRUE(other.AwaitEventCount(1));
  EXPECT_EQ(after_remove.load(), 0);
}

TEST_F(WatchLifecycleFaultsTest, RemoveAbortsTheParkedQuery) {
  Mirror mirror;
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine(EngineOptions(kLongBlock));
  absl::StatusOr<WatchId> id = engine->Watch("ns/a", mirror.Listener());
  ASSERT_TRUE(id.ok()) << id.status();
  Put("ns/a/x", "1");
  ASSERT_TRUE(mirror.AwaitEventCount(1));
  // Reads so far: the starting listing, the first blocking query, and the one parked after the
  // write's answer. Once the third one reached the server, the watch holds a busy connection.
  ASSERT_TRUE(Eventually([&] { return server().RequestCounts()["kv.get"] >= 3; }));
  const size_t with_watch = server().connection_count();
  engine->Remove(*id);
  EXPECT_TRUE(Eventually([&] { return server().connection_count() < with_watch; }))
      << "connections: " << server().connection_count() << ", before removal " << with_watch;
}

TEST_F(WatchLifecycleTest, CloseReturnsPromptlyWithParkedQueries) {
  Mirror mirror;
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine(EngineOptions(kLongBlock));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(engine->Watch(absl::StrCat("ns/w", i), mirror.Listener()).ok());
  }
  Put("ns/w0/x", "1");
  ASSERT_TRUE(mirror.AwaitEventCount(1));
  absl::Time start = absl::Now();
  engine->Close();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(engine->background_threads(), 0u);
  absl::StatusOr<WatchId> late = engine->Watch("ns/a", mirror.Listener());
  EXPECT_TRUE(absl::IsFailedPrecondition(late.status())) << late.status();
  start = absl::Now();
  engine.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST_F(WatchLifecycleTest, DestructorStopsPromptlyWithoutClose) {
  Mirror mirror;
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine(EngineOptions(kLongBlock));
  ASSERT_TRUE(engine->Watch("ns/a", mirror.Listener()).ok());
  absl::Time start = absl::Now();
  engine.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST_F(WatchLifecycleTest, RemoveFromInsideItsOwnListenerStopsFurtherCalls) {
  std::atomic<int> calls{0};
  absl::Notification removed;
  WatchId self = 0;
  absl::Notification registered;
  Mirror other;
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine();
  absl::StatusOr<WatchId> id = engine->Watch("ns/a", [&](const DataChangedEvent&) {
    ++calls;
    registered.WaitForNotification();
    engine->Remove(self);  // returns at once from inside the listener
    removed.Notify();
  });
  ASSERT_TRUE(id.ok()) << id.status();
  self = *id;
  registered.Notify();
  // Two keys in one write batch would be two events of one answer: only the first may arrive.
  std::vector<consul::TxnOp> ops = {consul::TxnOp::Set("ns/a/1", "1"),
                                    consul::TxnOp::Set("ns/a/2", "2")};
  ASSERT_TRUE(raw().Txn(ops).ok());
  ASSERT_TRUE(removed.WaitForNotificationWithTimeout(kPatience));
  // Later writes reach another watch but not the removed one.
  ASSERT_TRUE(engine->Watch("ns/a", other.Listener()).ok());
  Put("ns/a/3", "x");
  ASSERT_TRUE(other.AwaitEventCount(1));
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(WatchLifecycleTest, CloseFromInsideAListenerReturns) {
  absl::Notification closed;
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine();
  ASSERT_TRUE(engine
                  ->Watch("ns/a",
                          [&](const DataChangedEvent&) {
                            engine->Close();
                            closed.Notify();
                          })
                  .ok());
  Put("ns/a/x", "1");
  ASSERT_TRUE(closed.WaitForNotificationWithTimeout(kPatience));
  engine.reset();  // joins the worker that ran the listener
}

TEST_F(WatchLifecycleTest, ListenerExceptionIsCaughtAndTheWatchGoesOn) {
  Mirror mirror;
  auto record = mirror.Listener();
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine();
  ASSERT_TRUE(engine
                  ->Watch("ns/a",
                          [&](const DataChangedEvent& event) {
                            record(event);
                            if (event.key == "/a/boom") throw std::runtime_error("listener bug");
                          })
                  .ok());
  Put("ns/a/boom", "1");
  ASSERT_TRUE(mirror.AwaitEventCount(1));
  Put("ns/a/after", "2");
  EXPECT_TRUE(mirror.AwaitView({{"/a/boom", "1"}, {"/a/after", "2"}}));
}

TEST_F(WatchLifecycleTest, SlowListenerDoesNotStallOtherWatches) {
  absl::Notification release;
  absl::Notification slow_entered;
  Mirror fast;
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine();
  // Runs first on any exit: a listener left blocked would make the engine wait for it forever.
  absl::Cleanup unblock = [&release] {
    if (!release.HasBeenNotified()) release.Notify();
  };
  ASSERT_TRUE(engine
                  ->Watch("ns/slow",
                          [&](const DataChangedEvent&) {
                            slow_entered.Notify();
                            release.WaitForNotification();
                          })
                  .ok());
  ASSERT_TRUE(engine->Watch("ns/fast", fast.Listener()).ok());
  Put("ns/slow/x", "1");
  ASSERT_TRUE(slow_entered.WaitForNotificationWithTimeout(kPatience));
  Put("ns/fast/x", "1");
  EXPECT_TRUE(fast.AwaitEventCount(1)) << "a blocked listener stalled another watch";
}

TEST_F(WatchLifecycleTest, ManyWatchesShareOneIoThread) {
  Mirror first;
  std::vector<std::unique_ptr<Mirror>> mirrors;
  WatchEngineOptions options = EngineOptions();
  // This test counts the threads that serve the queries, so the dispatcher's temporary extra
  // worker (started when a listener batch outlasts the stall threshold; the slow-listener test
  // covers it) is kept out: under load, a sanitizer build can leave even these trivial listeners
  // descheduled for longer than the default 100 ms.
  options.dispatcher.stall_threshold = absl::Hours(1);
  // Declared after what its listeners use: destroyed (and joined) first.
  std::unique_ptr<WatchEngine> engine = NewEngine(options);
  ASSERT_TRUE(engine->Watch("ns/w/0", first.Listener()).ok());
  // The listener worker starts with the first event: count once one was delivered.
  Put("ns/w/0/k", "v");
  ASSERT_TRUE(first.AwaitView({{"/w/0/k", "v"}}));
  const int threads_with_one = ProcessThreadCount();
  // Every watch parks one connection. Real Consul serves at most 200 connections per client
  // address (limits.http_max_conns_per_client) and resets the rest, so there the test stays
  // below that; the tests' dev server has that limit off.
  const int kWatches = real_consul() ? 150 : 1000;
  for (int i = 1; i < kWatches; ++i) {
    mirrors.push_back(std::make_unique<Mirror>());
    ASSERT_TRUE(engine->Watch(absl::StrCat("ns/w/", i), mirrors.back()->Listener()).ok());
  }
  EXPECT_EQ(engine->watch_count(), static_cast<size_t>(kWatches));
  for (int i = 1; i < kWatches; i += 111) Put(absl::StrCat("ns/w/", i, "/k"), "v");
  for (int i = 1; i < kWatches; i += 111) {
    EXPECT_TRUE(mirrors[i - 1]->AwaitView({{absl::StrCat("/w/", i, "/k"), "v"}})) << i;
  }
  EXPECT_EQ(ProcessThreadCount(), threads_with_one);
  EXPECT_EQ(engine->background_threads(), 2u);
}

}  // namespace
}  // namespace registry::watch::testing
