#include "consul/txn.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(TxnRequestTest, EveryVerbIsEncodedWithOnlyItsFields) {
  std::vector<TxnOp> ops = {
      TxnOp::Set("k/set", "v", 3),
      TxnOp::Cas("k/cas", "v", 7),
      TxnOp::Lock("k/lock", "v", "s1"),
      TxnOp::Unlock("k/unlock", "", "s1", 2),
      TxnOp::Get("k/get"),
      TxnOp::GetOrEmpty("k/goe"),
      TxnOp::GetTree(""),
      TxnOp::CheckIndex("k/ci", 9),
      TxnOp::CheckSession("k/cs", "s1"),
      TxnOp::CheckNotExists("k/cne"),
      TxnOp::Delete("k/del"),
      TxnOp::DeleteTree("k/"),
      TxnOp::DeleteCas("k/dc", 11),
  };
  absl::StatusOr<HttpRequest> request = BuildTxnRequest(ops);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->method, HttpMethod::kPut);
  EXPECT_EQ(request->path, "/v1/txn");
  nlohmann::json expected = nlohmann::json::parse(R"([
    {"KV":{"Verb":"set","Key":"k/set","Value":"dg==","Flags":3}},
    {"KV":{"Verb":"cas","Key":"k/cas","Value":"dg==","Flags":0,"Index":7}},
    {"KV":{"Verb":"lock","Key":"k/lock","Value":"dg==","Flags":0,"Session":"s1"}},
    {"KV":{"Verb":"unlock","Key":"k/unlock","Value":"","Flags":2,"Session":"s1"}},
    {"KV":{"Verb":"get","Key":"k/get"}},
    {"KV":{"Verb":"get-or-empty","Key":"k/goe"}},
    {"KV":{"Verb":"get-tree","Key":""}},
    {"KV":{"Verb":"check-index","Key":"k/ci","Index":9}},
    {"KV":{"Verb":"check-session","Key":"k/cs","Session":"s1"}},
    {"KV":{"Verb":"check-not-exists","Key":"k/cne"}},
    {"KV":{"Verb":"delete","Key":"k/del"}},
    {"KV":{"Verb":"delete-tree","Key":"k/"}},
    {"KV":{"Verb":"delete-cas","Key":"k/dc","Index":11}}])");
  EXPECT_EQ(nlohmann::json::parse(request->body), expected);
  EXPECT_FALSE(request->replay_safe) << "a replayed transaction fails its own checks";
}

// A resend of these after a lost reply answers as a later first apply would; a check, a cas or
// an unlock would fail against the first apply's own work.
TEST(TxnRequestTest, OnlyOpsThatApplyTheSameTwiceRideAReusedConnection) {
  for (const TxnOp& op :
       {TxnOp::Set("k", "v"), TxnOp::Lock("k", "v", "s1"), TxnOp::Get("k"), TxnOp::GetOrEmpty("k"),
        TxnOp::GetTree("k/"), TxnOp::Delete("k"), TxnOp::DeleteTree("k/")}) {
    EXPECT_TRUE(BuildTxnRequest({op, TxnOp::Set("other", "v")})->replay_safe)
        << TxnVerbName(op.verb);
  }
  for (const TxnOp& op :
       {TxnOp::Cas("k", "v", 7), TxnOp::Unlock("k", "", "s1"), TxnOp::CheckIndex("k", 9),
        TxnOp::CheckSession("k", "s1"), TxnOp::CheckNotExists("k"), TxnOp::DeleteCas("k", 11)}) {
    EXPECT_FALSE(BuildTxnRequest({TxnOp::Set("other", "v"), op})->replay_safe)
        << TxnVerbName(op.verb);
  }
}

TEST(TxnRequestTest, InvalidOpsAreRefusedNamingTheOp) {
  absl::Status empty_key = BuildTxnRequest({TxnOp::Set("ok", "v"), TxnOp::Get("")}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(empty_key));
  EXPECT_THAT(empty_key.message(), HasSubstr("op 1 (get"));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildTxnRequest({TxnOp::Lock("k", "v", "")}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildTxnRequest({TxnOp::Delete("/k")}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      BuildTxnRequest({TxnOp::Set("k", std::string(kMaxValueBytes + 1, 'x'))}).status()));
}

TEST(TxnRequestTest, OpCountMustBeBetweenOneAndTheLimit) {
  EXPECT_TRUE(absl::IsInvalidArgument(BuildTxnRequest({}).status()));
  std::vector<TxnOp> too_many(kMaxTxnOps + 1, TxnOp::Get("k"));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildTxnRequest(too_many).status()));
  std::vector<TxnOp> at_limit(kMaxTxnOps, TxnOp::Get("k"));
  EXPECT_TRUE(BuildTxnRequest(at_limit).ok());
}

TEST(TxnRequestTest, BodyOverTheRequestLimitIsRefused) {
  std::string value(kMaxValueBytes / 2, 'x');
  absl::Status status = BuildTxnRequest({TxnOp::Set("a", value), TxnOp::Set("b", value)}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("body"));
}

TEST(TxnParseTest, CommittedResultsAreDecoded) {
  HttpRequest request = *BuildTxnRequest({TxnOp::Set("a", "1"), TxnOp::Get("b")});
  absl::StatusOr<TxnResult> result = ParseTxnResponse(
      request,
      Response(
          200,
          R"({"Results":[{"KV":{"Key":"a","Value":null,"Flags":0,"CreateIndex":5,"ModifyIndex":5}},)"
          R"({"KV":{"Key":"b","Value":"Mg==","CreateIndex":2,"ModifyIndex":3}}],"Errors":null})"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->committed);
  ASSERT_EQ(result->results.size(), 2u);
  EXPECT_EQ(result->results[0].modify_index, 5u);
  EXPECT_EQ(result->results[1].value, "2");
  EXPECT_THAT(result->errors, IsEmpty());
  EXPECT_FALSE(result->meta.has_value());
}

TEST(TxnParseTest, ReadOnlyTxnCarriesQueryMeta) {
  HttpRequest request = *BuildTxnRequest({TxnOp::GetOrEmpty("a")});
  absl::StatusOr<TxnResult> result =
      ParseTxnResponse(request, ReadResponse(200, R"({"Results":null,"Errors":null})", 8));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->committed);
  ASSERT_TRUE(result->meta.has_value());
  EXPECT_EQ(result->meta->index, 8u);
}

TEST(TxnParseTest, ConflictIsARolledBackResultListingEachError) {
  HttpRequest request =
      *BuildTxnRequest({TxnOp::CheckSession("lock", "s1"), TxnOp::Set("data", "x")});
  absl::StatusOr<TxnResult> result = ParseTxnResponse(
      request,
      Response(409, R"({"Results":null,"Errors":[{"OpIndex":0,"What":"failed session check"}]})"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->committed);
  ASSERT_EQ(result->errors.size(), 1u);
  EXPECT_EQ(result->errors[0].op_index, 0u);
  EXPECT_EQ(result->errors[0].what, "failed session check");
  EXPECT_THAT(result->results, IsEmpty());
}

// What Consul (1.8.7 and later) answers to a txn write whose token lacks the right: a rollback
// with "Permission denied" as the op's reason (newer versions append which right is missing).
TEST(TxnParseTest, RollbackForLackOfAnAclRightIsPermissionDenied) {
  HttpRequest request = *BuildTxnRequest({TxnOp::DeleteTree("ns/acl/k")});
  for (const char* what :
       {"Permission denied", "Permission denied: token lacks permission 'key:write' on ns/acl"}) {
    absl::StatusOr<TxnResult> result = ParseTxnResponse(
        request, Response(409, absl::StrCat(R"({"Results":null,"Errors":[{"OpIndex":0,"What":")",
                                            what, R"("}]})")));
    EXPECT_TRUE(absl::IsPermissionDenied(result.status())) << what << ": " << result.status();
    EXPECT_THAT(result.status().message(), HasSubstr("Permission denied")) << what;
  }
}

TEST(TxnErrorSaysTest, MatchesAnyFailedOpsReasonIgnoringCase) {
  TxnResult result;
  result.errors = {{0, "failed to lock key \"k\": Lock Delay"}, {1, "Invalid Session \"s\""}};
  EXPECT_TRUE(TxnErrorSays(result, "lock delay"));
  EXPECT_TRUE(TxnErrorSays(result, "invalid session"));
  EXPECT_FALSE(TxnErrorSays(result, "already held"));
  EXPECT_FALSE(TxnErrorSays(TxnResult{}, "invalid session"));
}

TEST(TxnParseTest, MalformedBodiesAreDataLoss) {
  HttpRequest request = *BuildTxnRequest({TxnOp::Get("a")});
  EXPECT_TRUE(absl::IsDataLoss(ParseTxnResponse(request, Response(409, "{}")).status()));
  EXPECT_TRUE(absl::IsDataLoss(
      ParseTxnResponse(request, Response(409, R"({"Errors":[{"What":"x"}]})")).status()));
  EXPECT_TRUE(
      absl::IsDataLoss(ParseTxnResponse(request, Response(200, R"({"Results":{}})")).status()));
  EXPECT_TRUE(absl::IsDataLoss(
      ParseTxnResponse(request, Response(200, R"({"Results":[{"KV":{"Key":"a"}}]})")).status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseTxnResponse(request, Response(200, "[]")).status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseTxnResponse(request, Response(200, "{\"Res")).status()));
}

TEST(TxnParseTest, TooManyOpsOnTheServerIsInvalidArgument) {
  HttpRequest request = *BuildTxnRequest({TxnOp::Get("a")});
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseTxnResponse(request, Response(413, "Transaction contains too many operations"))
          .status()));
}

}  // namespace
}  // namespace registry::consul
