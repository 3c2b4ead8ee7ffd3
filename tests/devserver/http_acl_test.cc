// SPDX-License-Identifier: Apache-2.0
// ACLs with a master token: what Consul (default_policy deny) answers to a request with the
// master token, with an unknown token (refused: 403 "ACL not found"), and with none at all (the
// anonymous token: single reads and writes refused, lists and session reads filtered to nothing,
// txn writes rolled back naming each op).
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using testing::TestResponse;

class HttpAclTest : public DevServerTest {
 protected:
  void SetUp() override {
    auto options = DefaultOptions();
    options.acl_master_token = "root-token";
    StartServer(options);
  }
};

TEST_F(HttpAclTest, RequestWithoutATokenIs403PermissionDenied) {
  TestResponse response = client_->Get("/v1/kv/k");
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(response.body, "Permission denied");
  EXPECT_EQ(client_->Put("/v1/session/create").status, 403);
}

TEST_F(HttpAclTest, RequestWithAWrongTokenIs403AclNotFound) {
  TestResponse response = client_->Do("GET", "/v1/kv/k", "", {"X-Consul-Token: guess"});
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(response.body, "ACL not found");
}

TEST_F(HttpAclTest, TokenInHeaderQueryOrBearerIsAccepted) {
  EXPECT_EQ(client_->Do("PUT", "/v1/kv/k", "v", {"X-Consul-Token: root-token"}).status, 200);
  EXPECT_EQ(client_->Get("/v1/kv/k?token=root-token").status, 200);
  EXPECT_EQ(client_->Do("GET", "/v1/kv/k", "", {"Authorization: Bearer root-token"}).status, 200);
}

// Consul filters what the anonymous token may not read instead of refusing the read.
TEST_F(HttpAclTest, ListsAndSessionReadsWithoutATokenAreFilteredToNothing) {
  const std::vector<std::string> root = {"X-Consul-Token: root-token"};
  ASSERT_EQ(client_->Do("PUT", "/v1/kv/dir/k", "v", root).status, 200);
  ASSERT_EQ(client_->Do("PUT", "/v1/session/create", "", root).status, 200);
  for (const char* list : {"/v1/kv/dir?recurse", "/v1/kv/dir?keys", "/v1/kv/?recurse"}) {
    TestResponse response = client_->Get(list);
    EXPECT_EQ(response.status, 404) << list;
    EXPECT_NE(response.Header("x-consul-index"), "") << list;
  }
  TestResponse root_keys = client_->Get("/v1/kv/?keys");
  EXPECT_EQ(root_keys.status, 200);
  EXPECT_EQ(root_keys.body, "[]");
  TestResponse sessions = client_->Get("/v1/session/list");
  EXPECT_EQ(sessions.status, 200);
  EXPECT_EQ(sessions.Json(), nlohmann::json::array());
}

TEST_F(HttpAclTest, TxnWithoutATokenRollsBackNamingEveryOpButReads) {
  ASSERT_EQ(client_->Do("PUT", "/v1/kv/k", "v", {"X-Consul-Token: root-token"}).status, 200);
  TestResponse writes = client_->Put("/v1/txn", R"([{"KV":{"Verb":"get","Key":"k"}},
      {"KV":{"Verb":"set","Key":"t","Value":"eA=="}},{"KV":{"Verb":"delete","Key":"k"}}])");
  EXPECT_EQ(writes.status, 409);
  EXPECT_EQ(writes.Json()["Errors"],
            nlohmann::json::parse(R"([{"OpIndex":1,"What":"Permission denied"},
                                      {"OpIndex":2,"What":"Permission denied"}])"));
  TestResponse reads = client_->Put("/v1/txn", R"([{"KV":{"Verb":"get","Key":"k"}}])");
  EXPECT_EQ(reads.status, 200);
  EXPECT_EQ(reads.Json()["Results"], nlohmann::json::array()) << "a filtered read leaked";
  EXPECT_EQ(client_->Get("/v1/kv/k?token=root-token").status, 200) << "the rollback deleted k";
}

TEST_F(HttpAclTest, StatusEndpointsNeedNoToken) {
  EXPECT_EQ(client_->Get("/v1/status/leader").status, 200);
}

}  // namespace
}  // namespace registry::devserver
