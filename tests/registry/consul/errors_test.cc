#include "registry/consul/errors.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "registry/consul/kv.h"
#include "registry/consul/transport.h"
#include "tests/registry/consul/mock_transport.h"

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

TEST(ErrorFromResponseTest, BadRequestAndTooLargeAreInvalidArgument) {
  EXPECT_TRUE(absl::IsInvalidArgument(ErrorFromResponse(PutA(), Response(400, "Bad"))));
  EXPECT_TRUE(absl::IsInvalidArgument(ErrorFromResponse(PutA(), Response(413, "Too large"))));
}

TEST(ErrorFromResponseTest, NotFoundIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ErrorFromResponse(PutA(), Response(404, ""))));
}

TEST(ErrorFromResponseTest, LeaderlessServerErrorIsUnavailable) {
  HttpResponse response = Response(500, "rpc error making call: No cluster leader");
  EXPECT_TRUE(IsNoLeaderResponse(response));
  EXPECT_TRUE(absl::IsUnavailable(ErrorFromResponse(PutA(), response)));
}

TEST(IsUnknownOutcomeTest, AnyServerErrorMayHaveBeenApplied) {
  // A raft apply that timed out on the leader may still be committed.
  EXPECT_TRUE(IsUnknownOutcome(
      ErrorFromResponse(PutA(), Response(500, "rpc error making call: timed out enqueuing"))));
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
  EXPECT_FALSE(IsNoLeaderResponse(Response(500, "boom")));
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

}  // namespace
}  // namespace registry::consul
