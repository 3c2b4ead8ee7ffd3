// SPDX-License-Identifier: Apache-2.0
// Status, agent, datacenter, consistency, ACL and malformed-request handling over HTTP.
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RawExchange;
using testing::TestHttpClient;
using testing::TestResponse;

using HttpMiscTest = DevServerTest;

// Consul (Go's net/http) writes canonical names: a client matching them exactly must read the
// same from both servers. KV and session reads carry no X-Consul-Effective-Consistency.
TEST_F(HttpMiscTest, ReadHeadersAreNamedOnTheWireAsConsulNamesThem) {
  ASSERT_EQ(client_->Put("/v1/kv/a", "v").status, 200);
  for (const char* path : {"/v1/kv/a", "/v1/kv/?recurse", "/v1/session/list"}) {
    const std::string reply = RawExchange(
        server_->port(),
        absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    EXPECT_THAT(reply, HasSubstr("\r\nX-Consul-Index: ")) << path;
    EXPECT_THAT(reply, HasSubstr("\r\nX-Consul-Knownleader: true\r\n")) << path;
    EXPECT_THAT(reply, HasSubstr("\r\nX-Consul-Lastcontact: 0\r\n")) << path;
    EXPECT_THAT(reply, Not(HasSubstr("Effective-Consistency"))) << path;
  }
}

TEST_F(HttpMiscTest, StatusLeaderAndPeersNameTheServerRpcAddress) {
  TestResponse leader = client_->Get("/v1/status/leader");
  EXPECT_EQ(leader.status, 200);
  EXPECT_EQ(leader.body, "\"127.0.0.1:8300\"");
  EXPECT_EQ(client_->Get("/v1/status/peers").Json(), nlohmann::json({"127.0.0.1:8300"}));
}

TEST_F(HttpMiscTest, AgentSelfReportsTheFieldsClientsRead) {
  auto self = client_->Get("/v1/agent/self").Json();
  EXPECT_EQ(self["Config"]["Datacenter"], "dc1");
  EXPECT_EQ(self["Config"]["NodeName"], "test-node");
  EXPECT_EQ(self["Member"]["Addr"], "127.0.0.1");
  EXPECT_EQ(self["Member"]["Name"], "test-node");
  EXPECT_EQ(self["DebugConfig"]["HTTPPort"], server_->port());
  EXPECT_EQ(self["Stats"]["consul"]["leader"], "true");
}

TEST_F(HttpMiscTest, UnknownDatacenterIs500NoPathToDatacenter) {
  for (const std::string path :
       {"/v1/kv/k?dc=dc2", "/v1/session/list?dc=dc2", "/v1/status/leader?dc=dc2"}) {
    TestResponse response = client_->Get(path);
    EXPECT_EQ(response.status, 500) << path;
    EXPECT_EQ(response.body, "No path to datacenter") << path;
  }
  EXPECT_EQ(client_->Get("/v1/kv/k?dc=dc1").status, 404);
}

TEST_F(HttpMiscTest, StaleAndConsistentTogetherAre400) {
  TestResponse response = client_->Get("/v1/kv/k?stale&consistent");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body, "Cannot specify ?stale with ?consistent, conflicting semantics.");
  EXPECT_EQ(client_->Get("/v1/kv/k?stale").status, 404);  // either alone is accepted
  EXPECT_EQ(client_->Get("/v1/kv/k?consistent").status, 404);
}

TEST_F(HttpMiscTest, UnknownPathIs404) {
  EXPECT_EQ(client_->Get("/v1/catalog/services").status, 404);
  EXPECT_EQ(client_->Get("/nothing").status, 404);
}

TEST_F(HttpMiscTest, MalformedRequestLineIs400AndTheServerKeepsServing) {
  const std::string reply = RawExchange(server_->port(), "THIS IS NOT HTTP\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  EXPECT_EQ(client_->Get("/v1/status/leader").status, 200);
}

TEST_F(HttpMiscTest, BadPercentEscapeIs400) {
  const std::string reply =
      RawExchange(server_->port(), "GET /v1/kv/a%zz HTTP/1.1\r\n\r\n", absl::Milliseconds(300));
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
}

TEST_F(HttpMiscTest, NonPrintableCharacterInThePathIs400) {
  TestResponse response = client_->Get("/v1/kv/a%01b");
  EXPECT_EQ(response.status, 400);
}

TEST_F(HttpMiscTest, HeadersOver64KiBAre431) {
  const std::string request =
      "GET /v1/status/leader HTTP/1.1\r\nX-Big: " + std::string(70 * 1024, 'a') + "\r\n\r\n";
  const std::string reply = RawExchange(server_->port(), request);
  EXPECT_EQ(reply.rfind("HTTP/1.1 431", 0), 0u) << reply.substr(0, 100);
}

TEST_F(HttpMiscTest, BodyOver1MiBIs413) {
  TestResponse response = client_->Put("/v1/txn", std::string(1024 * 1024 + 1, ' '));
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(client_->Get("/v1/status/leader").status, 200);  // a new connection still works
}

TEST_F(HttpMiscTest, ExpectContinueIsAnsweredSoTheBodyFollowsAtOnce) {
  const std::string reply = RawExchange(server_->port(),
                                        "PUT /v1/kv/e HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                                        "Expect: 100-continue\r\n\r\n",
                                        absl::Milliseconds(500));
  EXPECT_EQ(reply.rfind("HTTP/1.1 100 Continue", 0), 0u) << reply;
}

// Go's ServeMux answers a path that is not clean with a 301 to the cleaned one (query kept as
// sent) before any handler runs: nothing is written.
TEST_F(HttpMiscTest, UncleanPathsAre301ToTheCleanedPathAndWriteNothing) {
  struct Case {
    const char* sent;
    const char* location;
  };
  for (const Case& c :
       {Case{"/v1/kv/a//b", "/v1/kv/a/b"}, Case{"/v1/kv//a", "/v1/kv/a"},
        Case{"/v1/kv/a/./b/", "/v1/kv/a/b/"}, Case{"/v1/kv/a/../b", "/v1/kv/b"},
        Case{"/v1/kv/a/b/..", "/v1/kv/a"}, Case{"/v1/kv/a%20b//c", "/v1/kv/a%20b/c"},
        Case{"/v1/status//leader", "/v1/status/leader"}}) {
    TestResponse put = client_->Put(c.sent, "v");
    EXPECT_EQ(put.status, 301) << c.sent;
    EXPECT_EQ(put.Header("location"), c.location) << c.sent;
    EXPECT_EQ(put.body, "") << c.sent;
  }
  EXPECT_EQ(client_->Get("/v1/kv/?keys").body, "[]") << "a redirected PUT wrote a key";
  TestResponse get = client_->Get("/v1/kv//a?recurse&x=%41");
  EXPECT_EQ(get.status, 301);
  EXPECT_EQ(get.Header("location"), "/v1/kv/a?recurse&x=%41");
  EXPECT_EQ(get.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(get.body, "<a href=\"/v1/kv/a?recurse&amp;x=%41\">Moved Permanently</a>.\n\n");
}

}  // namespace
}  // namespace registry::devserver
