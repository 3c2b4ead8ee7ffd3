// SPDX-License-Identifier: Apache-2.0
#include "consul/txn.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "consul/errors.h"
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
// an unlock would fail against the first apply's own work. Among those, only a transaction of
// keys this caller alone writes may be resent: a set or delete of a shared key resent after
// another client's write would undo that write.
TEST(TxnRequestTest, OnlyOpsThatApplyTheSameTwiceOnKeysOfOneWriterRideAReusedConnection) {
  for (const TxnOp& op :
       {TxnOp::Set("k", "v"), TxnOp::Lock("k", "v", "s1"), TxnOp::Get("k"), TxnOp::GetOrEmpty("k"),
        TxnOp::GetTree("k/"), TxnOp::Delete("k"), TxnOp::DeleteTree("k/")}) {
    EXPECT_TRUE(
        BuildTxnRequest({op, TxnOp::Set("other", "v")}, Writers::kOnlyThisCaller)->replay_safe)
        << TxnVerbName(op.verb);
  }
  for (const TxnOp& op :
       {TxnOp::Cas("k", "v", 7), TxnOp::Unlock("k", "", "s1"), TxnOp::CheckIndex("k", 9),
        TxnOp::CheckSession("k", "s1"), TxnOp::CheckNotExists("k"), TxnOp::DeleteCas("k", 11)}) {
    EXPECT_FALSE(
        BuildTxnRequest({TxnOp::Set("other", "v"), op}, Writers::kOnlyThisCaller)->replay_safe)
        << TxnVerbName(op.verb);
  }
}

TEST(TxnRequestTest, AWriteOfASharedKeyIsNeverResentButAReadOrALockIs) {
  for (const TxnOp& op : {TxnOp::Set("k", "v"), TxnOp::Delete("k"), TxnOp::DeleteTree("k/")}) {
    EXPECT_FALSE(BuildTxnRequest({TxnOp::Get("other"), op})->replay_safe) << TxnVerbName(op.verb);
  }
  EXPECT_TRUE(BuildTxnRequest({TxnOp::Get("k"), TxnOp::GetOrEmpty("l"), TxnOp::GetTree("m/"),
                               TxnOp::Lock("n", "v", "s1")})
                  ->replay_safe);
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

// The reasons Consul 1.8.7 gives for each refused operation (state/txn.go, state/kvs.go and the
// txn endpoint's lock-delay pre-check; the dev server gives the same).
TEST(TxnFailureOfReasonTest, ConsulsReasonsAreTyped) {
  const std::pair<const char*, TxnFailure> kReasons[] = {
      {R"(invalid session "6a1f0c2e-5d1b-4a4e-9d61-0c1b0bd0a1a2")", TxnFailure::kInvalidSession},
      {R"(failed to lock key "ns/lock/a" due to lock delay)", TxnFailure::kLockDelay},
      {R"(failed to lock key "ns/lock/a", lock is already held)", TxnFailure::kAlreadyHeld},
      {R"(failed index check for key "ns/a", current modify index 12 != 11)",
       TxnFailure::kCheckFailed},
      {R"(failed to check index, key "ns/a" doesn't exist)", TxnFailure::kCheckFailed},
      {R"(failed session check for key "ns/a", current session "" != "s1")",
       TxnFailure::kCheckFailed},
      {R"(failed to check session, key "ns/a" doesn't exist)", TxnFailure::kCheckFailed},
      {R"(key "ns/a" exists)", TxnFailure::kCheckFailed},
      {R"(key "ns/a" doesn't exist)", TxnFailure::kCheckFailed},
      {R"(failed to set key "ns/a", index is stale)", TxnFailure::kCheckFailed},
      {R"(failed to delete key "ns/a", index is stale)", TxnFailure::kCheckFailed},
      {R"(failed to unlock key "ns/a", lock isn't held, or is held by another session)",
       TxnFailure::kCheckFailed},
      {"Permission denied", TxnFailure::kPermissionDenied},
      {"Permission denied: token lacks permission 'key:write' on ns/acl",
       TxnFailure::kPermissionDenied},
      {"missing session", TxnFailure::kOther},
      {"Must provide key", TxnFailure::kOther},
      {R"(unknown KV verb "get-or-empty")", TxnFailure::kOther},
      {"", TxnFailure::kOther},
  };
  for (const auto& [what, failure] : kReasons) {
    EXPECT_EQ(TxnFailureOfReason(what), failure) << what;
  }
}

TEST(TxnFailureOfReasonTest, CaseDoesNotMatterButQuotedKeysAndSessionsAreNotRead) {
  EXPECT_EQ(TxnFailureOfReason(R"(Invalid Session "s")"), TxnFailure::kInvalidSession);
  EXPECT_EQ(TxnFailureOfReason(R"(failed to lock key "k" due to Lock Delay)"),
            TxnFailure::kLockDelay);
  // A key may hold any words: only Consul's own are read.
  EXPECT_EQ(TxnFailureOfReason(R"(key "ns/invalid session/lock delay" exists)"),
            TxnFailure::kCheckFailed);
  EXPECT_EQ(TxnFailureOfReason(R"(failed to lock key "ns/a \"already held\"" due to lock delay)"),
            TxnFailure::kLockDelay);
  EXPECT_EQ(TxnFailureOfReason(R"(failed to set key "permission denied", index is stale)"),
            TxnFailure::kCheckFailed);
  // An unclosed quote: the whole text is read.
  EXPECT_EQ(TxnFailureOfReason(R"(failed to lock key "k due to lock delay)"),
            TxnFailure::kLockDelay);
}

TEST(TxnParseTest, EachRolledBackOpCarriesItsFailureAndFailedWithAsksAnyOfThem) {
  HttpRequest request = *BuildTxnRequest(
      {TxnOp::CheckNotExists("k"), TxnOp::Lock("k", "v", "s1"), TxnOp::Lock("j", "v", "s1")});
  absl::StatusOr<TxnResult> result = ParseTxnResponse(
      request,
      Response(409, R"({"Results":null,"Errors":[)"
                    R"({"OpIndex":1,"What":"failed to lock key \"k\" due to lock delay"},)"
                    R"({"OpIndex":2,"What":"failed to lock key \"j\" due to lock delay"}]})"));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->errors.size(), 2u);
  EXPECT_EQ(result->errors[0].failure, TxnFailure::kLockDelay);
  EXPECT_EQ(result->errors[1].failure, TxnFailure::kLockDelay);
  EXPECT_TRUE(result->FailedWith(TxnFailure::kLockDelay));
  EXPECT_FALSE(result->FailedWith(TxnFailure::kInvalidSession));
  EXPECT_FALSE(result->FailedWith(TxnFailure::kCheckFailed));

  TxnResult mixed;
  mixed.errors = {{0, TxnFailure::kCheckFailed, R"(key "k" exists)"},
                  {1, TxnFailure::kInvalidSession, R"(invalid session "s1")"}};
  EXPECT_TRUE(mixed.FailedWith(TxnFailure::kCheckFailed));
  EXPECT_TRUE(mixed.FailedWith(TxnFailure::kInvalidSession));
  EXPECT_FALSE(TxnResult{}.FailedWith(TxnFailure::kInvalidSession));
}

TEST(TxnFailureOfTest, ErrorsOfATransactionAreTyped) {
  HttpRequest request = *BuildTxnRequest({TxnOp::Set("a", "v")});
  EXPECT_EQ(TxnFailureOf(absl::OkStatus()), TxnFailure::kNone);
  EXPECT_EQ(
      TxnFailureOf(ParseTxnResponse(request, Response(413,
                                                      "Transaction contains too many operations "
                                                      "(65 > 64)"))
                       .status()),
      TxnFailure::kTooManyOperations);
  std::vector<TxnOp> too_many(kMaxTxnOps + 1, TxnOp::Set("a", "v"));
  EXPECT_EQ(TxnFailureOf(BuildTxnRequest(too_many).status()), TxnFailure::kTooManyOperations);
  EXPECT_EQ(
      TxnFailureOf(
          ParseTxnResponse(request, Response(409, R"({"Results":null,"Errors":[)"
                                                  R"({"OpIndex":0,"What":"Permission denied"}]})"))
              .status()),
      TxnFailure::kPermissionDenied);
  EXPECT_EQ(TxnFailureOf(ParseTxnResponse(request, Response(403, "ACL not found")).status()),
            TxnFailure::kPermissionDenied);
  EXPECT_EQ(TxnFailureOf(ErrorFromResponse(request, Response(500, R"(invalid session "s1")"))),
            TxnFailure::kInvalidSession);
  EXPECT_EQ(
      TxnFailureOf(ParseTxnResponse(request, Response(413,
                                                      "Request body too large, max size: 524288 "
                                                      "bytes"))
                       .status()),
      TxnFailure::kOther);
  EXPECT_EQ(TxnFailureOf(ParseTxnResponse(request, Response(500, "No cluster leader")).status()),
            TxnFailure::kOther);
  EXPECT_EQ(TxnFailureOf(absl::UnavailableError("connection refused")), TxnFailure::kOther);
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
