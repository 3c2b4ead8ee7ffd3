// SPDX-License-Identifier: Apache-2.0
// Fault injection (/v1/_dev/ and DevServer methods) and request counters.
#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using testing::Eventually;
using testing::TestResponse;

using HttpFaultTest = DevServerTest;

TEST_F(HttpFaultTest, FailedRequestsAre500NoClusterLeaderThenServiceResumes) {
  ASSERT_EQ(client_->Put("/v1/_dev/fault/fail?count=2").status, 200);
  for (int i = 0; i < 2; ++i) {
    TestResponse response = client_->Get("/v1/kv/k");
    EXPECT_EQ(response.status, 500);
    EXPECT_EQ(response.body, "No cluster leader");
  }
  EXPECT_EQ(client_->Get("/v1/kv/k").status, 404);
}

TEST_F(HttpFaultTest, LatencyDelaysEveryApiRequest) {
  server_->SetLatency(absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  EXPECT_EQ(client_->Get("/v1/status/leader").status, 200);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
  ASSERT_EQ(client_->Put("/v1/_dev/fault/latency?ms=0").status, 200);
  const absl::Time again = absl::Now();
  EXPECT_EQ(client_->Get("/v1/status/leader").status, 200);
  EXPECT_LT(absl::Now() - again, absl::Milliseconds(200));
}

TEST_F(HttpFaultTest, DroppedConnectionGetsNoReplyAndTheNextRequestIsServed) {
  ASSERT_EQ(client_->Put("/v1/_dev/fault/drop?count=1").status, 200);
  // A fresh connection: libcurl would silently retry a request on a reused one.
  TestResponse dropped = NewClient()->Get("/v1/kv/k");
  EXPECT_EQ(dropped.status, 0) << dropped.body;
  EXPECT_EQ(client_->Get("/v1/kv/k").status, 404);
}

TEST_F(HttpFaultTest, DroppedReplyAppliesTheWriteButClosesTheConnectionUnanswered) {
  ASSERT_EQ(client_->Put("/v1/_dev/fault/drop-reply?count=1").status, 200);
  // A fresh connection: libcurl would silently resend a request on a reused one.
  TestResponse dropped = NewClient()->Put("/v1/kv/k?cas=0", "applied");
  EXPECT_EQ(dropped.status, 0) << dropped.body;
  TestResponse read = client_->Get("/v1/kv/k?raw");
  EXPECT_EQ(read.status, 200);
  EXPECT_EQ(read.body, "applied");
  EXPECT_EQ(NewClient()->Put("/v1/kv/k?cas=0", "again").body, "false");  // answered again
}

TEST_F(HttpFaultTest, DroppedReplyWithAFilterSparesOtherRequests) {
  ASSERT_EQ(client_->Put("/v1/_dev/fault/drop-reply?count=1&path=/v1/txn&method=PUT").status, 200);
  EXPECT_EQ(NewClient()->Put("/v1/kv/k?cas=0", "kv").body, "true");  // not a txn: answered
  EXPECT_EQ(NewClient()->Get("/v1/txn").status, 405);                // not a PUT: answered
  TestResponse dropped =
      NewClient()->Put("/v1/txn", R"([{"KV":{"Verb":"set","Key":"t","Value":"eA=="}}])");
  EXPECT_EQ(dropped.status, 0) << dropped.body;
  EXPECT_EQ(client_->Get("/v1/kv/t?raw").body, "x");              // applied all the same
  EXPECT_EQ(NewClient()->Put("/v1/kv/k", "again").body, "true");  // the drop was used up
}

TEST_F(HttpFaultTest, DropAllClosesParkedQueriesWithoutReplies) {
  auto pending = AsyncGet("/v1/kv/k?index=100&wait=10m");
  ASSERT_TRUE(WaitForParkedQueries(1));
  TestResponse control = client_->Put("/v1/_dev/fault/drop-all");
  EXPECT_EQ(control.status, 200);  // the caller's own connection is answered
  EXPECT_EQ(pending.get().status, 0);
  EXPECT_TRUE(WaitForParkedQueries(0));
}

TEST_F(HttpFaultTest, DropAllConnectionsMethodClosesEveryConnection) {
  auto pending = AsyncGet("/v1/kv/k?index=100&wait=10m");
  ASSERT_TRUE(WaitForParkedQueries(1));
  server_->DropAllConnections();
  EXPECT_EQ(pending.get().status, 0);
  EXPECT_TRUE(Eventually([&] { return server_->connection_count() == 0; }));
}

TEST_F(HttpFaultTest, ExpiringASessionInvalidatesItNow) {
  const std::string id = CreateSession(R"({"Behavior": "delete"})");
  ASSERT_EQ(client_->Put("/v1/kv/eph?acquire=" + id, "v").body, "true");
  EXPECT_EQ(client_->Put("/v1/_dev/session/expire/" + id).status, 200);
  EXPECT_EQ(client_->Get("/v1/kv/eph").status, 404);
  EXPECT_EQ(client_->Put("/v1/_dev/session/expire/" + id).status, 404);
  EXPECT_FALSE(server_->ExpireSession(id).ok());
}

TEST_F(HttpFaultTest, IndexResetMakesIndexesGoBackwardsAndWritesClimbAgain) {
  for (int i = 0; i < 10; ++i) ASSERT_EQ(client_->Put("/v1/kv/k", std::to_string(i)).status, 200);
  const uint64_t high = std::stoull(client_->Get("/v1/kv/k").Header("x-consul-index"));
  auto pending = AsyncGet("/v1/kv/k?index=" + std::to_string(high) + "&wait=30s");
  ASSERT_TRUE(WaitForParkedQueries(1));
  TestResponse reset = client_->Put("/v1/_dev/fault/index-reset");
  ASSERT_EQ(reset.status, 200);
  EXPECT_EQ(reset.Json()["Index"], 1);
  TestResponse woken = pending.get();
  EXPECT_EQ(woken.Header("x-consul-index"), "1");  // returned at once, index went backwards
  EXPECT_EQ(woken.Json()[0]["Value"], "OQ==");     // data stayed
  ASSERT_EQ(client_->Put("/v1/kv/k", "after").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/j", "after").status, 200);
  EXPECT_EQ(client_->Get("/v1/kv/k").Header("x-consul-index"), "2");
  EXPECT_EQ(client_->Get("/v1/kv/j").Header("x-consul-index"), "3");
  EXPECT_LT(3u, high);
}

TEST_F(HttpFaultTest, FaultControlsAre404WithoutTheFlagButStatsStayOn) {
  auto options = DefaultOptions();
  options.enable_fault_injection = false;
  StartServer(options);
  EXPECT_EQ(client_->Put("/v1/_dev/fault/fail?count=1").status, 404);
  EXPECT_EQ(client_->Put("/v1/_dev/fault/index-reset").status, 404);
  EXPECT_EQ(client_->Get("/v1/_dev/stats").status, 200);
}

TEST_F(HttpFaultTest, BadControlParameterIs400NamingIt) {
  TestResponse response = client_->Put("/v1/_dev/fault/latency?ms=soon");
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.body.find("'ms'"), std::string::npos) << response.body;
}

TEST_F(HttpFaultTest, StatsCountRequestsPerEndpointAndResetClearsThem) {
  ASSERT_EQ(client_->Put("/v1/_dev/stats/reset").status, 200);
  client_->Put("/v1/kv/a", "1");
  client_->Put("/v1/kv/b", "1");
  client_->Get("/v1/kv/a");
  CreateSession();
  client_->Put("/v1/txn", "[]");
  auto stats = client_->Get("/v1/_dev/stats").Json();
  EXPECT_EQ(stats["kv.put"], 2);
  EXPECT_EQ(stats["kv.get"], 1);
  EXPECT_EQ(stats["session.create"], 1);
  EXPECT_EQ(stats["txn"], 1);
  EXPECT_FALSE(stats.contains("stats"));  // the controls do not count themselves
  EXPECT_EQ(stats["watches.woken"], 0);   // no blocking query was parked
  ASSERT_EQ(client_->Put("/v1/_dev/stats/reset").status, 200);
  EXPECT_EQ(client_->Get("/v1/_dev/stats").body, R"({"watches.woken":0})");
  EXPECT_TRUE(server_->RequestCounts().empty());
}

}  // namespace
}  // namespace registry::devserver
