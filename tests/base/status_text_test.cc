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

TEST(StatusTextTest, AbbreviatedKeepsShortTextWholeAndCutsLongTextGivingItsSize) {
  EXPECT_EQ(Abbreviated("/metadata/sharding_db"), "/metadata/sharding_db");
  const std::string exact(kShownInMessage, 'k');
  EXPECT_EQ(Abbreviated(exact), exact);
  const std::string huge = "/" + std::string(100 * 1024, 'a');
  EXPECT_EQ(Abbreviated(huge),
            absl::StrCat(huge.substr(0, kShownInMessage), "... (", huge.size(), " bytes)"));
}

TEST(StatusTextTest, AbbreviatedNeverCutsACharacterInTwo) {
  // "\xc3\xa9" (e acute) is two bytes, and the cut would fall between them: the whole
  // character goes.
  std::string accented(kShownInMessage - 1, 'k');
  for (int i = 0; i < 50; ++i) accented += "\xc3\xa9";
  EXPECT_EQ(Abbreviated(accented), std::string(kShownInMessage - 1, 'k') + "... (299 bytes)");
}

}  // namespace
}  // namespace registry
