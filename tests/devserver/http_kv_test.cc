// SPDX-License-Identifier: Apache-2.0
// /v1/kv over HTTP: shapes, status codes and headers as Consul sends them.
#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using testing::TestResponse;

using HttpKvTest = DevServerTest;

TEST_F(HttpKvTest, PutThenGetReturnsTheBase64ValueWithIndexes) {
  TestResponse put = client_->Put("/v1/kv/config/db?flags=42", "hello");
  EXPECT_EQ(put.status, 200);
  EXPECT_EQ(put.body, "true");
  EXPECT_EQ(put.Header("x-consul-index"), "");  // writes carry no index
  TestResponse get = client_->Get("/v1/kv/config/db");
  ASSERT_EQ(get.status, 200);
  auto entries = get.Json();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["Key"], "config/db");
  EXPECT_EQ(entries[0]["Value"], "aGVsbG8=");
  EXPECT_EQ(entries[0]["Flags"], 42);
  EXPECT_EQ(entries[0]["LockIndex"], 0);
  EXPECT_FALSE(entries[0].contains("Session"));
  EXPECT_EQ(get.Header("x-consul-index"), std::to_string(entries[0]["ModifyIndex"].get<int>()));
  EXPECT_EQ(get.Header("x-consul-knownleader"), "true");
  EXPECT_EQ(get.Header("x-consul-lastcontact"), "0");
  EXPECT_EQ(get.Header("content-type"), "application/json");
}

TEST_F(HttpKvTest, EmptyValueReadsBackAsNull) {
  ASSERT_EQ(client_->Put("/v1/kv/folder/").status, 200);
  EXPECT_TRUE(client_->Get("/v1/kv/folder/").Json()[0]["Value"].is_null());
}

TEST_F(HttpKvTest, PlainPutResetsFlagsToZero) {
  ASSERT_EQ(client_->Put("/v1/kv/f?flags=9", "v").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/f", "v").status, 200);
  EXPECT_EQ(client_->Get("/v1/kv/f").Json()[0]["Flags"], 0);
}

TEST_F(HttpKvTest, RawReturnsTheBareValueAsTextPlain) {
  ASSERT_EQ(client_->Put("/v1/kv/raw", "bare bytes").status, 200);
  TestResponse get = client_->Get("/v1/kv/raw?raw");
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "bare bytes");
  EXPECT_EQ(get.Header("content-type"), "text/plain");
  EXPECT_EQ(get.Header("x-content-type-options"), "nosniff");
  EXPECT_FALSE(get.Header("x-consul-index").empty());
}

TEST_F(HttpKvTest, MissingKeyIs404WithEmptyBodyAndAnIndex) {
  ASSERT_EQ(client_->Put("/v1/kv/other", "x").status, 200);
  TestResponse get = client_->Get("/v1/kv/missing");
  EXPECT_EQ(get.status, 404);
  EXPECT_EQ(get.body, "");
  EXPECT_EQ(get.Header("x-consul-index"), std::to_string(server_->store().last_index()));
}

TEST_F(HttpKvTest, GetOrPutWithoutAKeyIs400MissingKeyName) {
  for (const std::string method : {"GET", "PUT", "DELETE"}) {
    TestResponse response = client_->Do(method, "/v1/kv/");
    EXPECT_EQ(response.status, 400) << method;
    EXPECT_EQ(response.body, "Missing key name") << method;
  }
}

TEST_F(HttpKvTest, KeysWithSeparatorListsDirectChildren) {
  for (const char* key : {"app/a", "app/b/x", "app/b/y", "app/c/"}) {
    ASSERT_EQ(client_->Put(std::string("/v1/kv/") + key, "v").status, 200);
  }
  TestResponse keys = client_->Get("/v1/kv/app/?keys&separator=/");
  ASSERT_EQ(keys.status, 200);
  EXPECT_EQ(keys.Json(), nlohmann::json({"app/a", "app/b/", "app/c/"}));
}

TEST_F(HttpKvTest, KeysUnderAnEmptyPrefixIs404ButTheRootIsAnEmptyArray) {
  EXPECT_EQ(client_->Get("/v1/kv/nothing/?keys").status, 404);
  TestResponse root = client_->Get("/v1/kv/?keys");
  EXPECT_EQ(root.status, 200);
  EXPECT_EQ(root.body, "[]");
}

TEST_F(HttpKvTest, RecurseReturnsEveryEntryUnderThePrefixOr404) {
  ASSERT_EQ(client_->Put("/v1/kv/r/1", "a").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/r/2", "b").status, 200);
  TestResponse list = client_->Get("/v1/kv/r/?recurse");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.Json().size(), 2u);
  EXPECT_EQ(client_->Get("/v1/kv/none/?recurse").status, 404);
}

TEST_F(HttpKvTest, CasZeroCreatesOnlyIfAbsentAndAStaleIndexFails) {
  EXPECT_EQ(client_->Put("/v1/kv/c?cas=0", "1").body, "true");
  EXPECT_EQ(client_->Put("/v1/kv/c?cas=0", "2").body, "false");
  const int index = client_->Get("/v1/kv/c").Json()[0]["ModifyIndex"];
  EXPECT_EQ(client_->Put("/v1/kv/c?cas=" + std::to_string(index - 1), "3").body, "false");
  EXPECT_EQ(client_->Put("/v1/kv/c?cas=" + std::to_string(index), "4").body, "true");
}

TEST_F(HttpKvTest, ConflictingFlagsAre400) {
  TestResponse response = client_->Put("/v1/kv/k?cas=0&acquire=abc", "v");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body, "Conflicting flags: acquire=abc&cas=0");  // as Consul 1.8.7: no newline
  EXPECT_EQ(client_->Delete("/v1/kv/k?recurse&cas=3").status, 400);
}

TEST_F(HttpKvTest, NonNumericFlagsIs500WithGosMessageLikeConsul) {
  TestResponse response = client_->Put("/v1/kv/k?flags=abc", "v");
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "strconv.ParseUint: parsing \"abc\": invalid syntax");
}

TEST_F(HttpKvTest, AcquireAndReleaseFollowConsulsLockIndexRules) {
  const std::string session = CreateSession();
  EXPECT_EQ(client_->Put("/v1/kv/lock?acquire=" + session, "owner").body, "true");
  auto held = client_->Get("/v1/kv/lock").Json()[0];
  EXPECT_EQ(held["LockIndex"], 1);
  EXPECT_EQ(held["Session"], session);
  EXPECT_EQ(client_->Put("/v1/kv/lock?release=" + session, "free").body, "true");
  auto released = client_->Get("/v1/kv/lock").Json()[0];
  EXPECT_EQ(released["LockIndex"], 1);
  EXPECT_FALSE(released.contains("Session"));
  EXPECT_EQ(released["Value"], "ZnJlZQ==");
}

TEST_F(HttpKvTest, AcquireByAnotherSessionIsFalse) {
  const std::string first = CreateSession();
  const std::string second = CreateSession();
  ASSERT_EQ(client_->Put("/v1/kv/lock?acquire=" + first).body, "true");
  EXPECT_EQ(client_->Put("/v1/kv/lock?acquire=" + second).body, "false");
  EXPECT_EQ(client_->Put("/v1/kv/lock?release=" + second).body, "false");
}

TEST_F(HttpKvTest, AcquireWithAnUnknownSessionIs500) {
  TestResponse response =
      client_->Put("/v1/kv/lock?acquire=00000000-0000-4000-8000-000000000000", "v");
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "invalid session \"00000000-0000-4000-8000-000000000000\"");
  TestResponse malformed = client_->Put("/v1/kv/lock?acquire=not-a-session", "v");
  EXPECT_EQ(malformed.status, 500);
  EXPECT_EQ(malformed.body, "failed session lookup: index error: UUID must be 36 characters");
}

TEST_F(HttpKvTest, DeleteCasAnswersLikeConsul) {
  EXPECT_EQ(client_->Delete("/v1/kv/absent?cas=5").body, "true");
  ASSERT_EQ(client_->Put("/v1/kv/d", "v").status, 200);
  EXPECT_EQ(client_->Delete("/v1/kv/d?cas=0").body, "false");
  const int index = client_->Get("/v1/kv/d").Json()[0]["ModifyIndex"];
  EXPECT_EQ(client_->Delete("/v1/kv/d?cas=" + std::to_string(index)).body, "true");
  EXPECT_EQ(client_->Get("/v1/kv/d").status, 404);
}

TEST_F(HttpKvTest, DeleteRecurseRemovesTheWholeSubtree) {
  ASSERT_EQ(client_->Put("/v1/kv/tree/a", "1").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/tree/b/c", "2").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/treehouse", "3").status, 200);
  EXPECT_EQ(client_->Delete("/v1/kv/tree/?recurse").body, "true");
  EXPECT_EQ(client_->Get("/v1/kv/tree/?recurse").status, 404);
  EXPECT_EQ(client_->Get("/v1/kv/treehouse").status, 200);
}

TEST_F(HttpKvTest, ValueOver512KiBIs413AndNothingIsStored) {
  TestResponse response = client_->Put("/v1/kv/big", std::string(512 * 1024 + 1, 'x'));
  EXPECT_EQ(response.status, 413);
  EXPECT_NE(response.body.find("too large, max size: 524288 bytes"), std::string::npos);
  EXPECT_EQ(client_->Get("/v1/kv/big").status, 404);
  EXPECT_EQ(client_->Put("/v1/kv/big", std::string(512 * 1024, 'x')).status, 200);
}

TEST_F(HttpKvTest, OtherMethodsAre405WithAnAllowHeader) {
  TestResponse response = client_->Do("POST", "/v1/kv/k", "v");
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(response.Header("allow"), "OPTIONS,GET,PUT,DELETE");
  EXPECT_EQ(response.body, "method POST not allowed");
}

TEST_F(HttpKvTest, PercentEncodedKeysAreDecoded) {
  ASSERT_EQ(client_->Put("/v1/kv/a%20b%2Fc", "v").status, 200);
  EXPECT_EQ(client_->Get("/v1/kv/a%20b/c").Json()[0]["Key"], "a b/c");
}

// A key is whatever bytes its URL path decodes to; like Consul (Go's encoding/json), every read
// answers it with U+FFFD for the bytes that are not UTF-8 instead of failing the response.
TEST_F(HttpKvTest, KeysThatAreNotUtf8AreAnsweredWithReplacementCharacters) {
  ASSERT_EQ(client_->Put("/v1/kv/u/a%FFb", "v").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/u/%3Cq%22%5C%3E", "w").status, 200);  // <q"\>
  const std::string replaced =
      "u/a\xEF\xBF\xBD"
      "b";
  TestResponse list = client_->Get("/v1/kv/u/?recurse");
  ASSERT_EQ(list.status, 200) << list.error;
  EXPECT_EQ(list.Json()[0]["Key"], "u/<q\"\\>");
  EXPECT_EQ(list.Json()[1]["Key"], replaced);
  EXPECT_NE(list.body.find("\\u003cq\\\"\\\\\\u003e"), std::string::npos) << list.body;
  TestResponse one = client_->Get("/v1/kv/u/a%FFb");
  ASSERT_EQ(one.status, 200) << one.error;
  EXPECT_EQ(one.Json()[0]["Key"], replaced);
  TestResponse keys = client_->Get("/v1/kv/u/?keys");
  ASSERT_EQ(keys.status, 200) << keys.error;
  EXPECT_EQ(keys.Json(), nlohmann::json::parse(R"(["u/<q\"\\>", "u/a\ufffdb"])"));
  const std::string tree = R"([{"KV": {"Verb": "get-tree", "Key": "u/"}}])";
  TestResponse txn = client_->Put("/v1/txn", tree);
  ASSERT_EQ(txn.status, 200) << txn.error;
  EXPECT_EQ(txn.Json()["Results"][1]["KV"]["Key"], replaced);
}

}  // namespace
}  // namespace registry::devserver
