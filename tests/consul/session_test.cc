// SPDX-License-Identifier: Apache-2.0
#include "consul/session.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kSession[] =
    R"({"ID":"adf4238a-882b-9ddc-4a9d-5b6758e4159e","Name":"repo","Node":"n1",)"
    R"("LockDelay":15000000000,"Behavior":"delete","TTL":"30s","NodeChecks":["serfHealth"],)"
    R"("ServiceChecks":[{"ID":"web","Namespace":""}],"CreateIndex":5,"ModifyIndex":6})";

nlohmann::json Body(const HttpRequest& request) { return nlohmann::json::parse(request.body); }

TEST(SessionRequestTest, CreateSendsNameBehaviorTtlLockDelayAndNoChecks) {
  absl::StatusOr<HttpRequest> request = BuildSessionCreateRequest(
      {.name = "repo", .behavior = SessionBehavior::kDelete, .ttl = absl::Seconds(15)});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->method, HttpMethod::kPut);
  EXPECT_EQ(request->path, "/v1/session/create");
  EXPECT_EQ(Body(*request), nlohmann::json::parse(R"({
      "Name": "repo", "Behavior": "delete", "TTL": "15s", "LockDelay": "15s",
      "Checks": [], "NodeChecks": [], "ServiceChecks": []})"));
  EXPECT_FALSE(request->replay_safe) << "a replayed create makes a second session";
}

TEST(SessionRequestTest, SubSecondDurationsAreSentInMilliseconds) {
  absl::StatusOr<HttpRequest> request = BuildSessionCreateRequest(
      {.name = "x", .ttl = absl::Milliseconds(1500), .lock_delay = absl::Milliseconds(250)});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(Body(*request)["TTL"], "1500ms");
  EXPECT_EQ(Body(*request)["LockDelay"], "250ms");
  EXPECT_EQ(Body(*request)["Behavior"], "release");
}

TEST(SessionRequestTest, ZeroTtlIsOmittedAndZeroLockDelayIsSent) {
  absl::StatusOr<HttpRequest> request =
      BuildSessionCreateRequest({.name = "x", .lock_delay = absl::ZeroDuration(), .node = "n2"});
  ASSERT_TRUE(request.ok());
  EXPECT_FALSE(Body(*request).contains("TTL"));
  EXPECT_EQ(Body(*request)["LockDelay"], "0s");
  EXPECT_EQ(Body(*request)["Node"], "n2");
}

TEST(SessionRequestTest, InvalidDurationsAreRefusedNamingTheOption) {
  absl::Status ttl = BuildSessionCreateRequest({.name = "x", .ttl = absl::Hours(25)}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(ttl));
  EXPECT_THAT(ttl.message(), HasSubstr("ttl"));
  absl::Status delay =
      BuildSessionCreateRequest({.name = "x", .lock_delay = absl::Seconds(-1)}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(delay));
  EXPECT_THAT(delay.message(), HasSubstr("lock_delay"));
}

TEST(SessionRequestTest, IdEndpointsEscapeTheId) {
  absl::StatusOr<HttpRequest> renew = BuildSessionRenewRequest("a/b c");
  ASSERT_TRUE(renew.ok());
  EXPECT_EQ(renew->method, HttpMethod::kPut);
  EXPECT_EQ(renew->path, "/v1/session/renew/a%2Fb%20c");
  absl::StatusOr<HttpRequest> destroy = BuildSessionDestroyRequest("id1");
  ASSERT_TRUE(destroy.ok());
  EXPECT_EQ(destroy->method, HttpMethod::kPut);
  EXPECT_EQ(destroy->path, "/v1/session/destroy/id1");
  absl::StatusOr<HttpRequest> info =
      BuildSessionInfoRequest("id1", {.index = 4, .wait = absl::Seconds(1)});
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->method, HttpMethod::kGet);
  EXPECT_EQ(info->path, "/v1/session/info/id1");
  EXPECT_EQ(*info->FindParam("wait"), "1000ms");
  absl::StatusOr<HttpRequest> list = BuildSessionListRequest({});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->path, "/v1/session/list");
}

TEST(SessionRequestTest, EmptyIdIsRefused) {
  EXPECT_TRUE(absl::IsInvalidArgument(BuildSessionRenewRequest("").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildSessionDestroyRequest("").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildSessionInfoRequest("", {}).status()));
}

TEST(SessionParseTest, CreateReturnsTheId) {
  HttpRequest request = *BuildSessionCreateRequest({.name = "x"});
  absl::StatusOr<std::string> id =
      ParseSessionCreateResponse(request, Response(200, R"({"ID":"s1"})"));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "s1");
}

TEST(SessionParseTest, CreateWithoutIdIsDataLoss) {
  HttpRequest request = *BuildSessionCreateRequest({.name = "x"});
  EXPECT_TRUE(absl::IsDataLoss(ParseSessionCreateResponse(request, Response(200, "{}")).status()));
  EXPECT_TRUE(
      absl::IsDataLoss(ParseSessionCreateResponse(request, Response(200, R"({"ID":7})")).status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseSessionCreateResponse(request, Response(200, "[]")).status()));
}

TEST(SessionParseTest, CreateServerErrorKeepsConsulMessage) {
  HttpRequest request = *BuildSessionCreateRequest({.name = "x", .ttl = absl::Seconds(1)});
  absl::Status status =
      ParseSessionCreateResponse(request, Response(500, "Invalid Session TTL '1000000000'"))
          .status();
  EXPECT_TRUE(absl::IsInternal(status));
  EXPECT_THAT(status.message(), HasSubstr("Invalid Session TTL"));
}

TEST(SessionParseTest, InfoDecodesEveryField) {
  HttpRequest request = *BuildSessionInfoRequest("adf4", {});
  absl::StatusOr<SessionInfoResult> result =
      ParseSessionInfoResponse(request, ReadResponse(200, absl::StrCat("[", kSession, "]"), 6));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->session.has_value());
  const SessionInfo& info = *result->session;
  EXPECT_EQ(info.id, "adf4238a-882b-9ddc-4a9d-5b6758e4159e");
  EXPECT_EQ(info.name, "repo");
  EXPECT_EQ(info.node, "n1");
  EXPECT_EQ(info.behavior, SessionBehavior::kDelete);
  EXPECT_EQ(info.ttl, absl::Seconds(30));
  EXPECT_EQ(info.lock_delay, absl::Seconds(15));
  EXPECT_THAT(info.node_checks, ElementsAre("serfHealth"));
  EXPECT_THAT(info.service_checks, ElementsAre("web"));
  EXPECT_EQ(info.create_index, 5u);
  EXPECT_EQ(info.modify_index, 6u);
  EXPECT_EQ(result->meta.index, 6u);
}

TEST(SessionParseTest, InfoEmptyArrayMeansAbsent) {
  absl::StatusOr<SessionInfoResult> result =
      ParseSessionInfoResponse(*BuildSessionInfoRequest("x", {}), ReadResponse(200, "[]", 3));
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->session.has_value());
}

TEST(SessionParseTest, GoStyleTtlAndEmptyTtlParse) {
  HttpRequest request = *BuildSessionListRequest({});
  absl::StatusOr<SessionListResult> result = ParseSessionListResponse(
      request, ReadResponse(200,
                            R"([{"ID":"a","TTL":"1m30s","Behavior":"release"},)"
                            R"({"ID":"b","TTL":"","NodeChecks":null}])",
                            9));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->sessions.size(), 2u);
  EXPECT_EQ(result->sessions[0].ttl, absl::Seconds(90));
  EXPECT_EQ(result->sessions[1].ttl, absl::ZeroDuration());
  EXPECT_THAT(result->sessions[1].node_checks, IsEmpty());
}

TEST(SessionParseTest, MalformedSessionsAreDataLoss) {
  HttpRequest request = *BuildSessionListRequest({});
  for (const char* body : {R"({})", R"([{"Name":"no id"}])", R"([{"ID":"a","TTL":"soon"}])",
                           R"([{"ID":"a","LockDelay":"15s"}])", R"([{"ID":"a","Behavior":"x"}])",
                           R"([{"ID":"a","NodeChecks":"serfHealth"}])", "[{"}) {
    EXPECT_TRUE(
        absl::IsDataLoss(ParseSessionListResponse(request, ReadResponse(200, body, 1)).status()))
        << body;
  }
}

TEST(SessionParseTest, RenewReturnsTheSessionOrNulloptWhenGone) {
  HttpRequest request = *BuildSessionRenewRequest("adf4");
  absl::StatusOr<std::optional<SessionInfo>> renewed =
      ParseSessionRenewResponse(request, Response(200, absl::StrCat("[", kSession, "]")));
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  ASSERT_TRUE(renewed->has_value());
  EXPECT_EQ((*renewed)->ttl, absl::Seconds(30));
  absl::StatusOr<std::optional<SessionInfo>> gone =
      ParseSessionRenewResponse(request, Response(404, "Session id 'adf4' not found"));
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
}

TEST(SessionParseTest, DestroyAcceptsTrueAndMapsErrors) {
  HttpRequest request = *BuildSessionDestroyRequest("adf4");
  EXPECT_TRUE(ParseSessionDestroyResponse(request, Response(200, "true")).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(
      ParseSessionDestroyResponse(request, Response(403, "Permission denied"))));
  EXPECT_TRUE(absl::IsDataLoss(ParseSessionDestroyResponse(request, Response(200, "{"))));
}

}  // namespace
}  // namespace registry::consul
