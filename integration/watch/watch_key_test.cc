// SPDX-License-Identifier: Apache-2.0
// Key watches (WatchEngine::WatchKey) and posted tasks (WatchEngine::Post): what a lock monitor
// and lost-lock notifications are built on.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/monotonic.h"
#include "consul/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/watch/watch_fixture.h"

namespace registry::watch::testing {
namespace {

using ::testing::ElementsAre;

// Records every state a key observer is given: "-" for an absent key, else "value@session".
class StateLog {
 public:
  KeyObserver Observer() {
    return [this](const std::optional<consul::DirEntry>& entry) {
      absl::MutexLock lock(&mu_);
      states_.push_back(entry.has_value() ? entry->value + "@" + entry->session : "-");
      threads_.push_back(std::this_thread::get_id());
      first_at_ = std::min(first_at_, MonotonicNow());
    };
  }
  // Waits until the last state recorded is `state`; false on timeout.
  bool AwaitLast(const std::string& state) {
    return Eventually([&] {
      absl::MutexLock lock(&mu_);
      return !states_.empty() && states_.back() == state;
    });
  }
  std::vector<std::string> states() {
    absl::MutexLock lock(&mu_);
    return states_;
  }
  std::vector<std::thread::id> threads() {
    absl::MutexLock lock(&mu_);
    return threads_;
  }
  absl::Time first_at() {
    absl::MutexLock lock(&mu_);
    return first_at_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> states_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> threads_ ABSL_GUARDED_BY(mu_);
  absl::Time first_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
};

class WatchKeyTest : public WatchTest {};
// Tests that need the dev server's request counts or fault injection.
class WatchKeyFaultsTest : public registry::testing::DevServerOnly<WatchTest> {};

TEST_F(WatchKeyTest, ReportsTheFirstStateThenEveryChangeOfThatKeyAlone) {
  StateLog log;
  std::unique_ptr<WatchEngine> engine = NewEngine();
  ASSERT_TRUE(engine->WatchKey("ns/k", log.Observer(), {}).ok());
  ASSERT_TRUE(log.AwaitLast("-"));
  Put("ns/k", "1");
  ASSERT_TRUE(log.AwaitLast("1@"));
  Put("ns/k/below", "x");  // another key: not reported
  Put("ns/kk", "x");
  Put("ns/k", "2");
  ASSERT_TRUE(log.AwaitLast("2@"));
  Delete("ns/k");
  ASSERT_TRUE(log.AwaitLast("-"));
  EXPECT_THAT(log.states(), ElementsAre("-", "1@", "2@", "-"));
  for (std::thread::id thread : log.threads()) EXPECT_NE(thread, std::this_thread::get_id());
}

TEST_F(WatchKeyTest, ReportsTheSessionThatHoldsTheKey) {
  consul::SessionCreateOptions options;
  options.lock_delay = absl::ZeroDuration();
  absl::StatusOr<std::string> session = raw().CreateSession(options);
  ASSERT_TRUE(session.ok()) << session.status();
  StateLog log;
  std::unique_ptr<WatchEngine> engine = NewEngine();
  ASSERT_TRUE(engine->WatchKey("ns/lock", log.Observer(), {}).ok());
  ASSERT_TRUE(log.AwaitLast("-"));
  absl::StatusOr<bool> acquired = raw().KvPut("ns/lock", "v", {.acquire = *session});
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  ASSERT_TRUE(log.AwaitLast("v@" + *session));
  ASSERT_TRUE(ExpireSession(*session).ok());
  EXPECT_TRUE(log.AwaitLast("v@"));  // released: the key stays, no session holds it
}

TEST_F(WatchKeyTest, RemoveEndsTheObservationsAndCloseDropsTheWatch) {
  StateLog log;
  std::unique_ptr<WatchEngine> engine = NewEngine();
  absl::StatusOr<WatchId> id = engine->WatchKey("ns/k", log.Observer(), {});
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(log.AwaitLast("-"));
  engine->Remove(*id);
  EXPECT_EQ(engine->watch_count(), 0u);
  Put("ns/k", "1");
  // A key watch registered after the write has seen it: the removed one had its chance.
  StateLog later;
  ASSERT_TRUE(engine->WatchKey("ns/k", later.Observer(), {}).ok());
  ASSERT_TRUE(later.AwaitLast("1@"));
  EXPECT_THAT(log.states(), ElementsAre("-"));
  engine->Close();
  EXPECT_TRUE(absl::IsFailedPrecondition(engine->WatchKey("ns/k", log.Observer(), {}).status()));
}

TEST_F(WatchKeyTest, RefusesAnEmptyKeyAndAMissingObserver) {
  std::unique_ptr<WatchEngine> engine = NewEngine();
  EXPECT_TRUE(absl::IsInvalidArgument(engine->WatchKey("", [](const auto&) {}, {}).status()));
  absl::Status no_observer = engine->WatchKey("ns/k", nullptr, {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(no_observer));
  EXPECT_THAT(std::string(no_observer.message()), ::testing::HasSubstr("ns/k"));
  EXPECT_EQ(engine->watch_count(), 0u);
}

TEST_F(WatchKeyFaultsTest, MakesNoRequestBeforeItsStartTime) {
  StateLog log;
  std::unique_ptr<WatchEngine> engine = NewEngine();
  server().ResetRequestCounts();
  const absl::Time start_at = MonotonicNow() + absl::Milliseconds(300);
  ASSERT_TRUE(engine->WatchKey("ns/k", log.Observer(), {.start_at = start_at}).ok());
  absl::StatusOr<WatchId> never =
      engine->WatchKey("ns/never", log.Observer(), {.start_at = absl::InfiniteFuture()});
  ASSERT_TRUE(never.ok()) << never.status();
  ASSERT_TRUE(log.AwaitLast("-"));
  EXPECT_GE(log.first_at(), start_at);
  EXPECT_THAT(log.states(), ElementsAre("-"));  // "ns/never" was never read
  EXPECT_EQ(engine->watch_count(), 2u);
}

TEST_F(WatchKeyFaultsTest, RidesThroughFailedReadsWithoutReportingThem) {
  StateLog log;
  std::unique_ptr<WatchEngine> engine = NewEngine(EngineOptions(absl::Seconds(1)));
  Put("ns/k", "1");
  ASSERT_TRUE(engine->WatchKey("ns/k", log.Observer(), {}).ok());
  ASSERT_TRUE(log.AwaitLast("1@"));
  server().FailNextRequests(8);
  Put("ns/k", "2");  // retried by Put through the failures
  ASSERT_TRUE(log.AwaitLast("2@"));
  EXPECT_THAT(log.states(), ElementsAre("1@", "2@"));
}

}  // namespace
}  // namespace registry::watch::testing
