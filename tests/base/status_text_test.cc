// SPDX-License-Identifier: Apache-2.0
// tests/base/status_text_test.cc
#include "base/status_text.h"

#include "absl/types/optional.h"
#include "gtest/gtest.h"

namespace registry {
namespace {

constexpr char kMark[] = "type.example/Mark";

TEST(StatusTextTest, PrefixedKeepsTheCodeAndEveryPayload) {
  absl::Status cause = absl::UnavailableError("connection refused");
  cause.SetPayload(kMark, absl::Cord("not sent"));
  absl::Status status = Prefixed("persist '/a'", cause);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "persist '/a': connection refused");
  absl::optional<absl::Cord> mark = status.GetPayload(kMark);
  ASSERT_TRUE(mark.has_value());
  EXPECT_EQ(*mark, "not sent");
}

TEST(StatusTextTest, OkStaysOk) {
  EXPECT_TRUE(Prefixed("persist '/a'", absl::OkStatus()).ok());
  EXPECT_TRUE(WithMessage(absl::OkStatus(), "ignored").ok());
}

TEST(StatusTextTest, WithMessageReplacesOnlyTheMessage) {
  absl::Status cause = absl::PermissionDeniedError("token abc denied");
  cause.SetPayload(kMark, absl::Cord("x"));
  absl::Status status = WithMessage(cause, "token <redacted> denied");
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(), "token <redacted> denied");
  EXPECT_TRUE(status.GetPayload(kMark).has_value());
}

}  // namespace
}  // namespace registry
