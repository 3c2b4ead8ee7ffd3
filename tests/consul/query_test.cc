// SPDX-License-Identifier: Apache-2.0
#include "consul/query.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::Response;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

HttpRequest KvRequest() {
  HttpRequest request;
  request.path = "/v1/kv/a";
  return request;
}

TEST(FormatWaitTest, SendsWholeMilliseconds) {
  EXPECT_EQ(FormatWait(absl::Milliseconds(1500)), "1500ms");
}

TEST(FormatWaitTest, NinetySecondsIsNinetyThousandMilliseconds) {
  EXPECT_EQ(FormatWait(absl::Seconds(90)), "90000ms");
}

TEST(FormatWaitTest, PositiveWaitBelowOneMillisecondIsSentAsOneMillisecond) {
  EXPECT_EQ(FormatWait(absl::Microseconds(300)), "1ms");
}

TEST(FormatWaitTest, SubMillisecondPartsAreTruncated) {
  EXPECT_EQ(FormatWait(absl::Microseconds(2999)), "2ms");
}

TEST(FormatWaitTest, ZeroOrNegativeWaitIsNotSent) {
  EXPECT_EQ(FormatWait(absl::ZeroDuration()), "");
  EXPECT_EQ(FormatWait(absl::Seconds(-1)), "");
}

TEST(BlockingTimeoutTest, IsWaitPlusSixteenthPlusMargin) {
  EXPECT_EQ(BlockingTimeout(absl::Seconds(16), absl::Seconds(5)), absl::Seconds(22));
  EXPECT_EQ(BlockingTimeout(absl::Seconds(60), absl::Seconds(5)),
            absl::Seconds(65) + absl::Milliseconds(3750));
}

TEST(ApplyQueryOptionsTest, IndexZeroIsAPlainReadWithoutWait) {
  HttpRequest request = KvRequest();
  ASSERT_TRUE(ApplyQueryOptions({.index = 0, .wait = absl::Seconds(30)}, &request).ok());
  EXPECT_TRUE(request.params.empty());
  EXPECT_EQ(request.wait, absl::ZeroDuration());
}

TEST(ApplyQueryOptionsTest, BlockingReadSendsIndexThenWaitInMilliseconds) {
  HttpRequest request = KvRequest();
  ASSERT_TRUE(ApplyQueryOptions({.index = 42, .wait = absl::Milliseconds(1500)}, &request).ok());
  EXPECT_THAT(request.params, ElementsAre(Pair("index", "42"), Pair("wait", "1500ms")));
  EXPECT_EQ(request.wait, absl::Milliseconds(1500));
}

TEST(ApplyQueryOptionsTest, BlockingReadWithoutWaitExpectsTheServerDefault) {
  HttpRequest request = KvRequest();
  ASSERT_TRUE(ApplyQueryOptions({.index = 7}, &request).ok());
  EXPECT_THAT(request.params, ElementsAre(Pair("index", "7")));
  EXPECT_EQ(request.wait, kConsulDefaultWait);
}

TEST(ApplyQueryOptionsTest, ConsistencyModesAreBareFlags) {
  HttpRequest consistent = KvRequest();
  ASSERT_TRUE(ApplyQueryOptions({.consistent = true}, &consistent).ok());
  EXPECT_THAT(consistent.params, ElementsAre(Pair("consistent", "")));
  HttpRequest stale = KvRequest();
  ASSERT_TRUE(ApplyQueryOptions({.stale = true}, &stale).ok());
  EXPECT_THAT(stale.params, ElementsAre(Pair("stale", "")));
}

TEST(ApplyQueryOptionsTest, ConsistentAndStaleTogetherAreRejected) {
  HttpRequest request = KvRequest();
  absl::Status status = ApplyQueryOptions({.consistent = true, .stale = true}, &request);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("consistent"));
}

TEST(ApplyQueryOptionsTest, NegativeWaitIsRejected) {
  HttpRequest request = KvRequest();
  EXPECT_TRUE(absl::IsInvalidArgument(
      ApplyQueryOptions({.index = 1, .wait = absl::Seconds(-1)}, &request)));
}

TEST(ParseQueryMetaTest, ReadsIndexLeaderAndLastContact) {
  absl::StatusOr<QueryMeta> meta =
      ParseQueryMeta(KvRequest(), Response(200, "[]",
                                           {{"x-consul-index", "123"},
                                            {"X-Consul-KnownLeader", "true"},
                                            {"X-Consul-LastContact", "250"}}));
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->index, 123u);
  EXPECT_TRUE(meta->known_leader);
  EXPECT_EQ(meta->last_contact, absl::Milliseconds(250));
}

TEST(ParseQueryMetaTest, IndexZeroIsClampedToOne) {
  absl::StatusOr<QueryMeta> meta =
      ParseQueryMeta(KvRequest(), Response(200, "[]", {{"X-Consul-Index", "0"}}));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->index, 1u);
  EXPECT_FALSE(meta->known_leader);
}

TEST(ParseQueryMetaTest, FullRangeUint64IndexIsAccepted) {
  absl::StatusOr<QueryMeta> meta = ParseQueryMeta(
      KvRequest(), Response(200, "[]", {{"X-Consul-Index", "18446744073709551615"}}));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->index, UINT64_MAX);
}

TEST(ParseQueryMetaTest, MissingIndexIsDataLoss) {
  absl::StatusOr<QueryMeta> meta = ParseQueryMeta(KvRequest(), Response(200, "[]"));
  EXPECT_TRUE(absl::IsDataLoss(meta.status()));
  EXPECT_THAT(meta.status().message(), HasSubstr("consul GET /v1/kv/a"));
}

TEST(ParseQueryMetaTest, NonNumericIndexIsDataLoss) {
  for (const char* bad : {"abc", "-5", "12x", "", "18446744073709551616", "1.5"}) {
    absl::StatusOr<QueryMeta> meta =
        ParseQueryMeta(KvRequest(), Response(200, "[]", {{"X-Consul-Index", bad}}));
    EXPECT_TRUE(absl::IsDataLoss(meta.status())) << bad;
  }
}

TEST(ParseQueryMetaTest, MalformedLastContactIsDataLoss) {
  absl::StatusOr<QueryMeta> meta = ParseQueryMeta(
      KvRequest(), Response(200, "[]", {{"X-Consul-Index", "3"}, {"X-Consul-LastContact", "x"}}));
  EXPECT_TRUE(absl::IsDataLoss(meta.status()));
}

// Found by consul_response_fuzzer: 2^63 ms wrapped into a negative duration.
TEST(ParseQueryMetaTest, LastContactBeyondWhatADurationHoldsIsDataLoss) {
  absl::StatusOr<QueryMeta> meta = ParseQueryMeta(
      KvRequest(),
      Response(200, "[]",
               {{"X-Consul-Index", "3"}, {"X-Consul-LastContact", "9223372036854775808"}}));
  EXPECT_TRUE(absl::IsDataLoss(meta.status())) << meta.status();
}

TEST(IndexTrackerTest, StartsAtZeroSoTheFirstReadIsPlain) {
  IndexTracker tracker;
  EXPECT_EQ(tracker.next_index(), 0u);
}

TEST(IndexTrackerTest, GreaterIndexIsAChange) {
  IndexTracker tracker;
  EXPECT_EQ(tracker.Observe(5), IndexTracker::Change::kChanged);
  EXPECT_EQ(tracker.Observe(9), IndexTracker::Change::kChanged);
  EXPECT_EQ(tracker.next_index(), 9u);
}

TEST(IndexTrackerTest, SameIndexIsNoChange) {
  IndexTracker tracker;
  tracker.Observe(5);
  EXPECT_EQ(tracker.Observe(5), IndexTracker::Change::kUnchanged);
  EXPECT_EQ(tracker.next_index(), 5u);
}

TEST(IndexTrackerTest, BackwardsIndexResetsToZeroForARelist) {
  IndexTracker tracker;
  tracker.Observe(10);
  EXPECT_EQ(tracker.Observe(4), IndexTracker::Change::kReset);
  EXPECT_EQ(tracker.next_index(), 0u);
  EXPECT_EQ(tracker.Observe(4), IndexTracker::Change::kChanged);
  EXPECT_EQ(tracker.next_index(), 4u);
}

TEST(IndexTrackerTest, ZeroIndexCountsAsOneSoTheNextQueryBlocks) {
  IndexTracker tracker;
  EXPECT_EQ(tracker.Observe(0), IndexTracker::Change::kChanged);
  EXPECT_EQ(tracker.next_index(), 1u);
}

}  // namespace
}  // namespace registry::consul
