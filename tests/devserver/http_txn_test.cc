// SPDX-License-Identifier: Apache-2.0
// /v1/txn over HTTP: result and error shapes, limits.
#include "absl/strings/escaping.h"
#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using testing::TestResponse;

using HttpTxnTest = DevServerTest;

nlohmann::json KvOp(const std::string& verb, const std::string& key,
                    const std::string& value = "") {
  nlohmann::json kv = {{"Verb", verb}, {"Key", key}};
  if (!value.empty()) kv["Value"] = absl::Base64Escape(value);
  return {{"KV", kv}};
}

TEST_F(HttpTxnTest, SuccessfulTransactionReturnsResultsAndNullErrors) {
  nlohmann::json ops = {KvOp("set", "t/a", "1"), KvOp("set", "t/b", "2"), KvOp("get", "t/a")};
  TestResponse response = client_->Put("/v1/txn", ops.dump());
  ASSERT_EQ(response.status, 200) << response.body;
  auto body = response.Json();
  EXPECT_TRUE(body["Errors"].is_null());
  ASSERT_EQ(body["Results"].size(), 3u);
  EXPECT_TRUE(body["Results"][0]["KV"]["Value"].is_null());  // writes come back without values
  EXPECT_EQ(body["Results"][2]["KV"]["Value"], absl::Base64Escape("1"));
  EXPECT_EQ(body["Results"][0]["KV"]["ModifyIndex"], body["Results"][1]["KV"]["ModifyIndex"]);
}

TEST_F(HttpTxnTest, FailedTransactionIs409WithPerOpErrorsAndAppliesNothing) {
  nlohmann::json ops = {KvOp("set", "x", "1"), KvOp("check-not-exists", "x"),
                        KvOp("get", "missing")};
  TestResponse response = client_->Put("/v1/txn", ops.dump());
  ASSERT_EQ(response.status, 409);
  auto body = response.Json();
  EXPECT_TRUE(body["Results"].is_null());
  ASSERT_EQ(body["Errors"].size(), 2u);
  EXPECT_EQ(body["Errors"][0]["OpIndex"], 1);
  EXPECT_EQ(body["Errors"][0]["What"], "key \"x\" exists");
  EXPECT_EQ(body["Errors"][1]["OpIndex"], 2);
  EXPECT_EQ(client_->Get("/v1/kv/x").status, 404);
}

TEST_F(HttpTxnTest, MoreThan128OperationsIs413) {
  nlohmann::json ops = nlohmann::json::array();
  for (int i = 0; i < 129; ++i) ops.push_back(KvOp("get", "k" + std::to_string(i)));
  TestResponse response = client_->Put("/v1/txn", ops.dump());
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(response.body, "Transaction contains too many operations (129 > 128)");
  ops.erase(ops.size() - 1);
  EXPECT_EQ(client_->Put("/v1/txn", ops.dump()).status, 409);  // 128 is allowed (keys missing)
}

TEST_F(HttpTxnTest, MalformedBodyIs400) {
  TestResponse response = client_->Put("/v1/txn", "[{\"KV\": ");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body.rfind("Failed to parse body: ", 0), 0u) << response.body;
}

// A number beyond a double's range makes the JSON parser throw out_of_range, not parse_error; it
// escaped the handler and the request got no answer (found by tests/fuzz/devserver_http_fuzzer).
TEST_F(HttpTxnTest, NumberBeyondADoubleIs400AndTheServerKeepsServing) {
  for (const char* body :
       {"8e419", "[1e999]", R"([{"KV":{"Verb":"get","Key":"k","Index":1e400}}])"}) {
    TestResponse response = client_->Put("/v1/txn", body);
    EXPECT_EQ(response.status, 400) << body;
    EXPECT_EQ(response.body.rfind("Failed to parse body: ", 0), 0u) << response.body;
  }
  EXPECT_EQ(client_->Get("/v1/status/leader").status, 200);
}

TEST_F(HttpTxnTest, UnknownVerbIsAPerOpError) {
  TestResponse response =
      client_->Put("/v1/txn", nlohmann::json::array({KvOp("explode", "k")}).dump());
  ASSERT_EQ(response.status, 409);
  EXPECT_EQ(response.Json()["Errors"][0]["What"], "unknown KV verb \"explode\"");
}

TEST_F(HttpTxnTest, ReadOnlyTransactionCarriesLeaderHeaders) {
  ASSERT_EQ(client_->Put("/v1/kv/r", "v").status, 200);
  TestResponse response = client_->Put("/v1/txn", nlohmann::json::array({KvOp("get", "r")}).dump());
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(response.Header("x-consul-knownleader"), "true");
  EXPECT_EQ(response.Json()["KnownLeader"], true);
  EXPECT_EQ(response.Json()["ConsistencyLevel"], "");
}

// Consul decodes txn bodies strictly (Go's DisallowUnknownFields), matching names ignoring case.
TEST_F(HttpTxnTest, UnknownFieldsAre400NamingTheField) {
  for (const char* body : {R"([{"Bogus":1,"KV":{"Verb":"get","Key":"k"}}])",
                           R"([{"KV":{"Verb":"get","Key":"k","Bogus":null}}])"}) {
    TestResponse response = client_->Put("/v1/txn", body);
    EXPECT_EQ(response.status, 400) << body;
    EXPECT_EQ(response.body, "Failed to parse body: json: unknown field \"Bogus\"") << body;
  }
  ASSERT_EQ(client_->Put("/v1/kv/k", "v").status, 200);
  EXPECT_EQ(client_->Put("/v1/txn", R"([{"kv":{"verb":"get","key":"k","Namespace":""}}])").status,
            200);
}

TEST_F(HttpTxnTest, GetIsNotAllowed) { EXPECT_EQ(client_->Get("/v1/txn").status, 405); }

}  // namespace
}  // namespace registry::devserver
