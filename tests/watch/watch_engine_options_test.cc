// SPDX-License-Identifier: Apache-2.0
// Option validation of the watch engine (no server needed).
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "watch/watch_engine.h"

namespace registry::watch {
namespace {

TEST(WatchEngineOptionsTest, DefaultsAreValid) {
  EXPECT_TRUE(ValidateWatchEngineOptions(WatchEngineOptions{}).ok());
}

TEST(WatchEngineOptionsTest, NonPositiveBlockWaitIsRejectedNamingTheField) {
  WatchEngineOptions options;
  options.block_query_wait = absl::ZeroDuration();
  absl::Status status = ValidateWatchEngineOptions(options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("block_query_wait"), absl::string_view::npos) << status;
}

TEST(WatchEngineOptionsTest, BlockWaitAboveConsulsMaximumIsRejected) {
  WatchEngineOptions options;
  options.block_query_wait = absl::Minutes(11);
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateWatchEngineOptions(options)));
}

TEST(WatchEngineOptionsTest, RetryMaxBelowRetryMinIsRejected) {
  WatchEngineOptions options;
  options.retry_min = absl::Seconds(2);
  options.retry_max = absl::Seconds(1);
  absl::Status status = ValidateWatchEngineOptions(options);
  EXPECT_NE(status.message().find("retry_max"), absl::string_view::npos) << status;
}

TEST(WatchEngineOptionsTest, QueriesPerWatchOutsideOneTo180AreRejectedNamingTheField) {
  WatchEngineOptions options;
  for (int bad : {0, 181}) {
    options.max_queries_per_watch = bad;
    absl::Status status = ValidateWatchEngineOptions(options);
    EXPECT_TRUE(absl::IsInvalidArgument(status));
    EXPECT_NE(status.message().find(absl::StrCat("max_queries_per_watch: ", bad)),
              absl::string_view::npos)
        << status;
  }
  options.max_queries_per_watch = 1;
  EXPECT_TRUE(ValidateWatchEngineOptions(options).ok());
}

TEST(WatchEngineOptionsTest, NegativeGuardPauseIsRejectedNamingTheField) {
  WatchEngineOptions options;
  options.split_guard_pause = absl::Milliseconds(-1);
  absl::Status status = ValidateWatchEngineOptions(options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("split_guard_pause"), absl::string_view::npos) << status;
  options.split_guard_pause = absl::ZeroDuration();
  EXPECT_TRUE(ValidateWatchEngineOptions(options).ok());
}

TEST(WatchEngineOptionsTest, CreateRejectsBadClientOptions) {
  consul::ClientOptions client;
  client.servers = "";
  EXPECT_TRUE(absl::IsInvalidArgument(WatchEngine::Create(client, {}).status()));
}

TEST(WatchEngineOptionsTest, CreateRejectsANullClient) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      WatchEngine::Create(static_cast<consul::Client*>(nullptr), {}).status()));
}

TEST(WatchEngineOptionsTest, WatchAgainstAnUnreachableServerFailsNamingTheKey) {
  consul::ClientOptions client;
  client.servers = "127.0.0.1:1";  // nothing listens on port 1
  client.connect_timeout = absl::Seconds(1);
  client.request_timeout = absl::Milliseconds(500);  // how long the first listing is retried
  absl::StatusOr<std::unique_ptr<WatchEngine>> engine = WatchEngine::Create(client, {});
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<WatchId> id = (*engine)->Watch("ns/a", [](const DataChangedEvent&) {});
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(absl::IsUnavailable(id.status())) << id.status();
  EXPECT_NE(id.status().message().find("ns/a"), absl::string_view::npos) << id.status();
  EXPECT_EQ((*engine)->watch_count(), 0u);
}

}  // namespace
}  // namespace registry::watch
