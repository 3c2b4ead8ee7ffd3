// SPDX-License-Identifier: Apache-2.0
// Blocking-query rules at the API layer, without sockets: when a BlockingQuery completes,
// how long it may wait, and which index it reports.
#include <variant>

#include "devserver/api.h"
#include "tests/devserver/store_test_util.h"

namespace registry::devserver {
namespace {

using testing::FakeClock;
using testing::MakeStore;
using testing::Set;

class ApiBlockingTest : public ::testing::Test {
 protected:
  ApiBlockingTest() : api_(ApiConfig{}, store_.get(), &faults_, &stats_) {}

  ApiOutcome Get(const std::string& target) {
    HttpRequest request;
    request.method = "GET";
    auto parsed = ParseTarget(target);
    EXPECT_TRUE(parsed.ok());
    request.path = parsed->first;
    request.query = parsed->second;
    return api_.Handle(request);
  }

  std::unique_ptr<BlockingQuery> Blocking(const std::string& target) {
    ApiOutcome outcome = Get(target);
    auto* query = std::get_if<std::unique_ptr<BlockingQuery>>(&outcome);
    EXPECT_NE(query, nullptr) << target << " did not block";
    return query != nullptr ? std::move(*query) : nullptr;
  }

  static std::string Header(const HttpResponse& response, const std::string& name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) return value;
    }
    return "";
  }

  FakeClock clock_;
  std::unique_ptr<Store> store_ = MakeStore(&clock_);
  FaultInjector faults_;
  RequestStats stats_;
  Api api_;
};

TEST_F(ApiBlockingTest, IndexZeroAnswersAtOnce) {
  ApiOutcome outcome = Get("/v1/kv/a?index=0&wait=10m");
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(outcome));
  EXPECT_EQ(std::get<HttpResponse>(outcome).status, 404);
}

TEST_F(ApiBlockingTest, EmptyStoreReportsIndexOneNotZero) {
  ApiOutcome outcome = Get("/v1/kv/a");
  EXPECT_EQ(Header(std::get<HttpResponse>(outcome), "X-Consul-Index"), "1");
}

TEST_F(ApiBlockingTest, QueryWaitsWhileIndexIsNotAboveTheRequestedOne) {
  Set(*store_, "a", "1");
  const uint64_t index = store_->Get("a").index;
  auto query = Blocking("/v1/kv/a?index=" + std::to_string(index));
  uint64_t version = 0;
  EXPECT_FALSE(query->Step(false, &version).has_value());
  Set(*store_, "a", "2");
  std::optional<HttpResponse> response = query->Step(false, &version);
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(Header(*response, "X-Consul-Index"), std::to_string(store_->Get("a").index));
}

TEST_F(ApiBlockingTest, OlderIndexAnswersAtOnce) {
  Set(*store_, "a", "1");
  Set(*store_, "a", "2");
  auto query = Blocking("/v1/kv/a?index=1");
  uint64_t version = 0;
  EXPECT_TRUE(query->Step(false, &version).has_value());
}

TEST_F(ApiBlockingTest, MissingKeyStaysBlockedAcrossUnrelatedWritesUntilItAppears) {
  Set(*store_, "other", "1");
  auto query = Blocking("/v1/kv/wanted?index=" + std::to_string(store_->last_index()));
  uint64_t version = 0;
  EXPECT_FALSE(query->Step(false, &version).has_value());
  Set(*store_, "other", "2");  // the table index moves past the requested one
  EXPECT_FALSE(query->Step(false, &version).has_value());
  Set(*store_, "wanted", "here");
  std::optional<HttpResponse> response = query->Step(false, &version);
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
}

TEST_F(ApiBlockingTest, MissingKeyWithAStaleIndexAnswers404AtOnce) {
  Set(*store_, "other", "1");
  Set(*store_, "other", "2");
  auto query = Blocking("/v1/kv/wanted?index=2");
  uint64_t version = 0;
  std::optional<HttpResponse> response = query->Step(false, &version);
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 404);
}

TEST_F(ApiBlockingTest, IndexAheadOfTheStoreOnlyEndsAtTheTimeout) {
  Set(*store_, "a", "1");
  auto query = Blocking("/v1/kv/a?index=1000");
  uint64_t version = 0;
  Set(*store_, "a", "2");
  EXPECT_FALSE(query->Step(false, &version).has_value());
  std::optional<HttpResponse> response = query->Step(/*timed_out=*/true, &version);
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
}

TEST_F(ApiBlockingTest, IndexResetEndsAWaitingQueryWithTheLowerIndex) {
  for (int i = 0; i < 10; ++i) Set(*store_, "a", std::to_string(i));
  auto query = Blocking("/v1/kv/a?index=" + std::to_string(store_->last_index()));
  uint64_t version = 0;
  EXPECT_FALSE(query->Step(false, &version).has_value());
  store_->ResetIndex(1);
  std::optional<HttpResponse> response = query->Step(false, &version);
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(Header(*response, "X-Consul-Index"), "1");
}

TEST_F(ApiBlockingTest, WaitIsCappedAtTheMaxQueryTimePlusJitter) {
  auto query = Blocking("/v1/kv/a?index=5&wait=1h");
  EXPECT_GE(query->timeout(), absl::Minutes(10));
  EXPECT_LT(query->timeout(), absl::Minutes(10) + absl::Minutes(10) / 16);
}

TEST_F(ApiBlockingTest, MissingOrNonPositiveWaitUsesTheDefaultQueryTime) {
  for (const char* target :
       {"/v1/kv/a?index=5", "/v1/kv/a?index=5&wait=0s", "/v1/kv/a?index=5&wait=-3s"}) {
    auto query = Blocking(target);
    EXPECT_GE(query->timeout(), absl::Minutes(5)) << target;
    EXPECT_LT(query->timeout(), absl::Minutes(5) + absl::Minutes(5) / 16) << target;
  }
}

TEST_F(ApiBlockingTest, MillisecondWaitIsHonouredWithAtMostASixteenthOfJitter) {
  auto query = Blocking("/v1/kv/a?index=5&wait=1500ms");
  EXPECT_GE(query->timeout(), absl::Milliseconds(1500));
  EXPECT_LT(query->timeout(), absl::Milliseconds(1500) + absl::Milliseconds(1500) / 16);
}

TEST_F(ApiBlockingTest, RecurseQueryWatchesThePrefixAndKeyQueryTheKey) {
  EXPECT_EQ(Blocking("/v1/kv/p/?recurse&index=5")->scope().kind, WatchScope::Kind::kPrefix);
  EXPECT_EQ(Blocking("/v1/kv/p/?keys&index=5")->scope().kind, WatchScope::Kind::kPrefix);
  EXPECT_EQ(Blocking("/v1/kv/p?index=5")->scope().kind, WatchScope::Kind::kKey);
  EXPECT_EQ(Blocking("/v1/session/list?index=5")->scope().kind, WatchScope::Kind::kSessions);
}

}  // namespace
}  // namespace registry::devserver
