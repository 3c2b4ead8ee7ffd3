// SPDX-License-Identifier: Apache-2.0
#include "consul/errors.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "consul/catalog.h"
#include "consul/kv.h"
#include "consul/transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::Response;
using ::testing::HasSubstr;
using ::testing::Optional;

HttpRequest PutA() { return *BuildKvPutRequest("a", "v", {}); }

TEST(ErrorFromResponseTest, MessageNamesMethodPathStatusAndConsulMessage) {
  absl::Status status = ErrorFromResponse(PutA(), Response(403, "Permission denied\n"));
  EXPECT_TRUE(absl::IsPermissionDenied(status));
  EXPECT_EQ(status.message(), "consul PUT /v1/kv/a: HTTP 403: Permission denied");
  EXPECT_THAT(HttpStatusOf(status), Optional(403));
}

TEST(ErrorFromResponseTest, TheRequestOfAHugeKeyIsNamedByItsFirstBytesAndSize) {
  const std::string key(100 * 1024, 'a');
  const HttpRequest request = *BuildKvPutRequest(key, "v", {});
  absl::Status status =
      ErrorFromResponse(request, Response(431, "Request Header Fields Too Large"));
  EXPECT_THAT(status.message(), HasSubstr("consul PUT /v1/kv/aaaa"));
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat(" bytes): HTTP 431")));
  EXPECT_LT(status.message().size(), 400u) << status.message().substr(0, 300);
}

TEST(ErrorFromResponseTest, BadRequestAndTooLargeAreInvalidArgument) {
  EXPECT_TRUE(absl::IsInvalidArgument(ErrorFromResponse(PutA(), Response(400, "Bad"))));
  EXPECT_TRUE(absl::IsInvalidArgument(ErrorFromResponse(PutA(), Response(413, "Too large"))));
}

TEST(ErrorFromResponseTest, AnUnknownSessionNodeIsTheMissingNodeAnswer) {
  absl::Status status = ErrorFromResponse(PutA(), Response(500, "Missing node registration"));
  EXPECT_TRUE(IsMissingNodeAnswer(status)) << status;
  EXPECT_FALSE(IsMissingNodeAnswer(ErrorFromResponse(PutA(), Response(500, "Invalid session"))));
  EXPECT_FALSE(IsMissingNodeAnswer(ConnectionError("Missing node registration")));
}

TEST(ErrorFromResponseTest, NotFoundIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ErrorFromResponse(PutA(), Response(404, ""))));
}

TEST(ErrorFromResponseTest, LeaderlessServerErrorIsUnavailableAndNotApplied) {
  HttpResponse response = Response(500, "rpc error making call: No cluster leader");
  EXPECT_EQ(LeaderFailureOf(response), LeaderFailure::kNotApplied);
  absl::Status status = ErrorFromResponse(PutA(), response);
  EXPECT_TRUE(absl::IsUnavailable(status));
  EXPECT_TRUE(IsConnectionError(status));  // nothing was written: safe to send again anywhere
  EXPECT_FALSE(IsUnknownOutcome(status));
}

// Answers of a 3-server Consul 1.8.7 cluster whose leader was killed, while the others elect.
TEST(LeaderFailureOfTest, AFollowerThatCannotReachTheLeaderAppliedNothing) {
  EXPECT_EQ(LeaderFailureOf(Response(500,
                                     "rpc error getting client: failed to get conn: dial tcp "
                                     "127.0.0.1:0->127.0.0.1:21013: connect: connection refused")),
            LeaderFailure::kNotApplied);
  EXPECT_EQ(LeaderFailureOf(Response(500, "rpc error making call: timed out enqueuing operation")),
            LeaderFailure::kNotApplied);
  EXPECT_EQ(LeaderFailureOf(Response(500, "No known Consul servers")), LeaderFailure::kNotApplied);
}

TEST(LeaderFailureOfTest, AForwardWhoseAnswerWasLostMayHaveBeenApplied) {
  for (const char* body : {"rpc error making call: stream closed", "rpc error making call: EOF",
                           "leadership lost while committing log", "raft is already shutdown"}) {
    EXPECT_EQ(LeaderFailureOf(Response(500, body)), LeaderFailure::kOutcomeUnknown) << body;
    absl::Status status = ErrorFromResponse(PutA(), Response(500, body));
    EXPECT_TRUE(absl::IsUnavailable(status)) << body;
    EXPECT_TRUE(IsUnknownOutcome(status)) << body;
  }
}

TEST(LeaderFailureOfTest, OtherAnswersAreNotLeaderFailures) {
  EXPECT_EQ(LeaderFailureOf(Response(500, "boom")), LeaderFailure::kNone);
  EXPECT_EQ(LeaderFailureOf(Response(200, "No cluster leader")), LeaderFailure::kNone);
  EXPECT_EQ(LeaderFailureOf(Response(409, "rpc error making call")), LeaderFailure::kNone);
}

TEST(IsUnknownOutcomeTest, AnyServerErrorMayHaveBeenApplied) {
  // A raft apply that timed out on the leader may still be committed.
  EXPECT_TRUE(IsUnknownOutcome(ErrorFromResponse(PutA(), Response(500, "raft apply: boom"))));
  EXPECT_TRUE(IsUnknownOutcome(ErrorFromResponse(PutA(), Response(503, "busy"))));
  EXPECT_TRUE(IsUnknownOutcome(absl::UnavailableError("reply lost")));
}

TEST(IsUnknownOutcomeTest, DefiniteAnswersAndUnsentRequestsAreKnown) {
  EXPECT_FALSE(IsUnknownOutcome(ErrorFromResponse(PutA(), Response(403, "Permission denied"))));
  EXPECT_FALSE(IsUnknownOutcome(ErrorFromResponse(PutA(), Response(400, "Bad"))));
  EXPECT_FALSE(IsUnknownOutcome(
      ErrorFromResponse(PutA(), Response(500, "Invalid session \"4f1a1d2e-0000\""))));
  EXPECT_FALSE(IsUnknownOutcome(ConnectionError("connection refused")));
  EXPECT_FALSE(IsUnknownOutcome(absl::InternalError("not an HTTP answer")));
}

TEST(ErrorFromResponseTest, InvalidSessionIsFailedPrecondition) {
  absl::Status status = ErrorFromResponse(PutA(), Response(500, "invalid session \"1a2b\""));
  EXPECT_TRUE(absl::IsFailedPrecondition(status));
  EXPECT_THAT(HttpStatusOf(status), Optional(500));
}

TEST(ErrorFromResponseTest, OtherServerErrorsAreInternalAndOtherClientErrorsFailedPrecondition) {
  EXPECT_TRUE(absl::IsInternal(ErrorFromResponse(PutA(), Response(500, "boom"))));
  EXPECT_TRUE(absl::IsFailedPrecondition(ErrorFromResponse(PutA(), Response(405, "no"))));
  EXPECT_TRUE(absl::IsUnavailable(ErrorFromResponse(PutA(), Response(503, "busy"))));
  EXPECT_TRUE(absl::IsUnavailable(ErrorFromResponse(PutA(), Response(429, "slow down"))));
}

TEST(ErrorFromResponseTest, LongOrBinaryBodiesAreCutAndEscaped) {
  absl::Status status = ErrorFromResponse(PutA(), Response(500, std::string(5000, 'x') + "\x01"));
  EXPECT_LT(status.message().size(), 400u);
  EXPECT_THAT(status.message(), HasSubstr("..."));
}

TEST(HttpStatusOfTest, IsEmptyForStatusesWithoutAnHttpAnswer) {
  EXPECT_EQ(HttpStatusOf(absl::UnavailableError("refused")), std::nullopt);
}

// What lock/ retries with back-off and watch/ reports as a failing server: answers of Consul
// 1.8.7 during an election, a server error, a request cut by its timeout, a malformed body.
TEST(IsTransientTest, NoAnswerAServerErrorATimeoutOrAMalformedAnswerMayBeCuredByRetrying) {
  EXPECT_TRUE(IsTransient(ErrorFromResponse(PutA(), Response(500, "No cluster leader"))));
  EXPECT_TRUE(IsTransient(
      ErrorFromResponse(PutA(), Response(500, "rpc error making call: stream closed"))));
  EXPECT_TRUE(IsTransient(ErrorFromResponse(PutA(), Response(500, "raft apply: timed out"))));
  EXPECT_TRUE(IsTransient(ErrorFromResponse(PutA(), Response(503, "busy"))));
  EXPECT_TRUE(IsTransient(ErrorFromResponse(PutA(), Response(429, "Too Many Requests"))));
  EXPECT_TRUE(IsTransient(ConnectionError("connection refused")));
  EXPECT_TRUE(IsTransient(absl::DeadlineExceededError("request timeout")));
  EXPECT_TRUE(IsTransient(MalformedResponse(PutA(), "not JSON")));
}

TEST(IsTransientTest, RefusalsTheSessionsEndAndCancellationAreNot) {
  EXPECT_FALSE(IsTransient(absl::OkStatus()));
  EXPECT_FALSE(IsTransient(ErrorFromResponse(PutA(), Response(403, "Permission denied"))));
  EXPECT_FALSE(IsTransient(ErrorFromResponse(PutA(), Response(403, "ACL not found"))));
  EXPECT_FALSE(IsTransient(ErrorFromResponse(PutA(), Response(404, ""))));
  EXPECT_FALSE(IsTransient(ErrorFromResponse(PutA(), Response(400, "Missing key name"))));
  EXPECT_FALSE(IsTransient(
      ErrorFromResponse(PutA(), Response(413, "Request body too large, max size: 524288 bytes"))));
  EXPECT_FALSE(IsTransient(
      ErrorFromResponse(PutA(), Response(500, "invalid session \"6a1f0c2e-5d1b-4a4e\""))));
  EXPECT_FALSE(IsTransient(absl::CancelledError("closed")));
}

TEST(IsInvalidSessionTest, IsConsulsAnswerToAWriteBoundToAnUnknownSession) {
  // Consul 1.8.7's answer to PUT /v1/kv/a?acquire=<a destroyed session>.
  EXPECT_TRUE(IsInvalidSession(ErrorFromResponse(
      PutA(), Response(500, "invalid session \"6a1f0c2e-5d1b-4a4e-9d61-0c1b0bd0a1a2\""))));
  EXPECT_TRUE(IsInvalidSession(ErrorFromResponse(PutA(), Response(500, "Invalid session \"s1\""))));
}

TEST(IsInvalidSessionTest, OtherAnswersAreNot) {
  // A bad TTL is a plain bad request that Consul answers with 500.
  EXPECT_FALSE(IsInvalidSession(ErrorFromResponse(
      PutA(), Response(500, "Invalid Session TTL '500000000', must be between [10s=24h0m0s]"))));
  EXPECT_FALSE(
      IsInvalidSession(ErrorFromResponse(PutA(), Response(405, "method DELETE not allowed"))));
  EXPECT_FALSE(IsInvalidSession(ErrorFromResponse(PutA(), Response(404, ""))));
  EXPECT_FALSE(IsInvalidSession(absl::FailedPreconditionError("invalid session \"s1\"")));
  EXPECT_FALSE(IsInvalidSession(absl::OkStatus()));
}

TEST(ReachabilityOfTest, AnAnswerEvenAnErrorMeansReachableAndOnlyUnavailableMeansNot) {
  EXPECT_THAT(ReachabilityOf(absl::OkStatus()), Optional(true));
  EXPECT_THAT(ReachabilityOf(ErrorFromResponse(PutA(), Response(403, "Permission denied"))),
              Optional(true));
  EXPECT_THAT(ReachabilityOf(ErrorFromResponse(PutA(), Response(404, ""))), Optional(true));
  EXPECT_THAT(ReachabilityOf(ErrorFromResponse(
                  PutA(), Response(500, "rpc error making call: No cluster leader"))),
              Optional(false));
  EXPECT_THAT(ReachabilityOf(absl::UnavailableError("connection refused")), Optional(false));
  // Says nothing of the store: the caller gave up, or one 5xx that may be a leader's one-off.
  EXPECT_EQ(ReachabilityOf(absl::CancelledError("closed")), std::nullopt);
  EXPECT_EQ(ReachabilityOf(absl::DeadlineExceededError("caller's deadline")), std::nullopt);
  EXPECT_EQ(ReachabilityOf(ErrorFromResponse(PutA(), Response(500, "raft apply timed out"))),
            std::nullopt);
}

}  // namespace
}  // namespace registry::consul
