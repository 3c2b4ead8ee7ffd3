// SPDX-License-Identifier: Apache-2.0
// /v1/session over HTTP, including real-time TTL expiry (server session_ttl_min = 1 s).
#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using testing::Eventually;
using testing::TestResponse;

using HttpSessionTest = DevServerTest;

TEST_F(HttpSessionTest, InfoShowsConsulsDefaultsForABodylessCreate) {
  const std::string id = CreateSession();
  TestResponse info = client_->Get("/v1/session/info/" + id);
  ASSERT_EQ(info.status, 200);
  auto session = info.Json()[0];
  EXPECT_EQ(session["ID"], id);
  EXPECT_EQ(session["Node"], "test-node");
  EXPECT_EQ(session["LockDelay"], 15000000000LL);
  EXPECT_EQ(session["Behavior"], "release");
  EXPECT_EQ(session["TTL"], "");
  EXPECT_EQ(session["NodeChecks"], nlohmann::json({"serfHealth"}));
  EXPECT_EQ(info.Header("x-consul-index"), std::to_string(session["CreateIndex"].get<int>()));
}

// As Consul 1.8.7 answers: an empty list, and no pre-1.7 "Checks" field.
TEST_F(HttpSessionTest, EmptyChecksListRemovesTheDefaultCheck) {
  const std::string id = CreateSession(R"({"Checks": []})");
  const auto session = client_->Get("/v1/session/info/" + id).Json()[0];
  EXPECT_EQ(session["NodeChecks"], nlohmann::json::array());
  EXPECT_FALSE(session.contains("Checks"));
}

TEST_F(HttpSessionTest, FieldNamesMatchCaseInsensitivelyLikeGo) {
  const std::string id = CreateSession(R"({"name": "svc", "behavior": "delete", "ttl": "5s"})");
  auto session = client_->Get("/v1/session/info/" + id).Json()[0];
  EXPECT_EQ(session["Name"], "svc");
  EXPECT_EQ(session["Behavior"], "delete");
  EXPECT_EQ(session["TTL"], "5s");
}

TEST_F(HttpSessionTest, LockDelayAcceptsStringsNanosecondsAndSmallNumbersAsSeconds) {
  struct Case {
    const char* body;
    long long want_ns;
  };
  for (const Case& c :
       {Case{R"({"LockDelay": "2s"})", 2000000000LL}, Case{R"({"LockDelay": 5})", 5000000000LL},
        Case{R"({"LockDelay": 3000000000})", 3000000000LL}, Case{R"({"LockDelay": 0})", 0LL}}) {
    const std::string id = CreateSession(c.body);
    EXPECT_EQ(client_->Get("/v1/session/info/" + id).Json()[0]["LockDelay"], c.want_ns) << c.body;
  }
}

TEST_F(HttpSessionTest, TtlBelowTheMinimumIs500WithConsulsMessage) {
  TestResponse response = client_->Put("/v1/session/create", R"({"TTL": "500ms"})");
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "Invalid Session TTL '500000000', must be between [1s=24h0m0s]");
}

TEST_F(HttpSessionTest, UnknownNodeIs500MissingNodeRegistration) {
  TestResponse response = client_->Put("/v1/session/create", R"({"Node": "ghost"})");
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "Missing node registration");
}

TEST_F(HttpSessionTest, InvalidBehaviorIs500) {
  TestResponse response = client_->Put("/v1/session/create", R"({"Behavior": "vanish"})");
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "Invalid Behavior setting 'vanish'");
}

TEST_F(HttpSessionTest, MalformedBodyIs400RequestDecodeFailed) {
  TestResponse response = client_->Put("/v1/session/create", "{not json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body.rfind("Request decode failed: ", 0), 0u) << response.body;
}

// As for txn bodies: a number beyond a double's range used to leave the request unanswered.
TEST_F(HttpSessionTest, NumberBeyondADoubleIs400AndTheServerKeepsServing) {
  TestResponse response = client_->Put("/v1/session/create", R"({"LockDelay": 1e999})");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body.rfind("Request decode failed: ", 0), 0u) << response.body;
  EXPECT_EQ(client_->Get("/v1/status/leader").status, 200);
}

TEST_F(HttpSessionTest, RenewReturnsTheSessionAndUnknownIdsAre404) {
  const std::string id = CreateSession(R"({"TTL": "10s"})");
  TestResponse renewed = client_->Put("/v1/session/renew/" + id);
  ASSERT_EQ(renewed.status, 200);
  EXPECT_EQ(renewed.Json()[0]["ID"], id);
  TestResponse missing = client_->Put("/v1/session/renew/00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "Session id '00000000-0000-4000-8000-000000000000' not found");
}

TEST_F(HttpSessionTest, DestroyIsTrueEvenForUnknownIdsAndInfoThenIsAnEmptyArray) {
  const std::string id = CreateSession();
  EXPECT_EQ(client_->Put("/v1/session/destroy/" + id).body, "true");
  EXPECT_EQ(client_->Put("/v1/session/destroy/00000000-0000-4000-8000-000000000000").body, "true");
  TestResponse info = client_->Get("/v1/session/info/" + id);
  EXPECT_EQ(info.status, 200);
  EXPECT_EQ(info.body, "[]");
}

TEST_F(HttpSessionTest, NodeAndListReturnLiveSessions) {
  CreateSession();
  CreateSession();
  EXPECT_EQ(client_->Get("/v1/session/list").Json().size(), 2u);
  EXPECT_EQ(client_->Get("/v1/session/node/test-node").Json().size(), 2u);
  EXPECT_EQ(client_->Get("/v1/session/node/other").body, "[]");
}

TEST_F(HttpSessionTest, WrongMethodIs405) {
  TestResponse response = client_->Get("/v1/session/create");
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(response.Header("allow"), "OPTIONS,PUT");
}

TEST_F(HttpSessionTest, TtlExpiryReleasesTheHeldKeyWithinTwoTtlsAndStartsLockDelay) {
  const std::string id = CreateSession(R"({"TTL": "1s", "LockDelay": "10s"})");
  const absl::Time created = absl::Now();
  ASSERT_EQ(client_->Put("/v1/kv/lock?acquire=" + id, "v").body, "true");
  ASSERT_TRUE(Eventually([&] { return client_->Get("/v1/session/info/" + id).body == "[]"; },
                         absl::Seconds(5)));
  EXPECT_GE(absl::Now() - created, absl::Seconds(2) - absl::Milliseconds(50));
  auto entry = client_->Get("/v1/kv/lock").Json()[0];
  EXPECT_FALSE(entry.contains("Session"));
  const std::string other = CreateSession();
  EXPECT_EQ(client_->Put("/v1/kv/lock?acquire=" + other).body, "false");  // lock-delay
}

TEST_F(HttpSessionTest, TtlExpiryOfADeleteSessionDeletesItsKeys) {
  const std::string id = CreateSession(R"({"TTL": "1s", "Behavior": "delete"})");
  ASSERT_EQ(client_->Put("/v1/kv/online/me?acquire=" + id, "here").body, "true");
  EXPECT_TRUE(
      Eventually([&] { return client_->Get("/v1/kv/online/me").status == 404; }, absl::Seconds(5)));
  EXPECT_EQ(client_->Get("/v1/session/info/" + id).body, "[]");
}

TEST_F(HttpSessionTest, RenewingEveryHalfTtlKeepsTheSessionAlive) {
  const std::string id = CreateSession(R"({"TTL": "1s"})");
  const absl::Time until = absl::Now() + absl::Seconds(3);
  while (absl::Now() < until) {
    ASSERT_EQ(client_->Put("/v1/session/renew/" + id).status, 200);
    absl::SleepFor(absl::Milliseconds(500));  // the client's renewal period, not a race fix
  }
  EXPECT_EQ(client_->Get("/v1/session/info/" + id).Json().size(), 1u);
}

}  // namespace
}  // namespace registry::devserver
