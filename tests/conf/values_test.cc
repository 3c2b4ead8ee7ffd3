// SPDX-License-Identifier: Apache-2.0
// tests/conf/values_test.cc
//
// The value parsers behind the props, tested directly for their edges.
#include "conf/values.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conf/error_matchers.h"

namespace registry::conf {
namespace {

using ::testing::ElementsAre;

constexpr DurationRule kSecondsRule = {absl::Seconds(1), absl::Milliseconds(1), absl::Hours(24)};
constexpr DurationRule kZeroAllowedRule = {absl::Milliseconds(1), absl::ZeroDuration(),
                                           absl::Seconds(60)};

TEST(ParseDurationValueTest, PlainNumberIsReadInTheRulesUnit) {
  EXPECT_EQ(*ParseDurationValue("30", kSecondsRule), absl::Seconds(30));
  EXPECT_EQ(*ParseDurationValue("30", kZeroAllowedRule), absl::Milliseconds(30));
  EXPECT_EQ(*ParseDurationValue(" +7 ", kSecondsRule), absl::Seconds(7));
}

TEST(ParseDurationValueTest, GoStyleDurationsAreAccepted) {
  EXPECT_EQ(*ParseDurationValue("1m30s", kSecondsRule), absl::Seconds(90));
  EXPECT_EQ(*ParseDurationValue("1.5s", kSecondsRule), absl::Milliseconds(1500));
  EXPECT_EQ(*ParseDurationValue("0s", kZeroAllowedRule), absl::ZeroDuration());
}

TEST(ParseDurationValueTest, NegativeIsNamedAsSuchWhenZeroIsAllowed) {
  EXPECT_TRUE(IsInvalid(ParseDurationValue("-1", kZeroAllowedRule), {"'-1' is negative"}));
  EXPECT_TRUE(IsInvalid(ParseDurationValue("-1", kSecondsRule), {"'-1' is not a positive"}));
}

TEST(ParseDurationValueTest, EmptyAndInfiniteAreNotDurations) {
  EXPECT_TRUE(IsInvalid(ParseDurationValue("", kSecondsRule), {"'' is not a duration"}));
  EXPECT_TRUE(IsInvalid(ParseDurationValue("-inf", kSecondsRule), {"is not a duration"}));
}

TEST(ParseServerListTest, BracketedIpv6AndSchemesInAnyCaseAreAccepted) {
  EXPECT_THAT(*ParseServerList("[fe80::1]:8500,HTTPS://h:1"),
              ElementsAre("[fe80::1]:8500", "HTTPS://h:1"));
}

TEST(ParseServerListTest, BrokenBracketsAreRejected) {
  EXPECT_TRUE(IsInvalid(ParseServerList("[::1:8500"), {"'[::1:8500'", "unclosed"}));
  EXPECT_TRUE(IsInvalid(ParseServerList("[::1]8500"), {"'[::1]8500'", "no port"}));
  EXPECT_TRUE(IsInvalid(ParseServerList("[zz]:8500"), {"'[zz]:8500'", "IPv6"}));
}

TEST(ValidateTokenTest, TokenWithControlCharactersIsRejected) {
  EXPECT_TRUE(IsInvalid(ValidateToken("abc\r\nX-Evil: 1"), {"whitespace"}));
  EXPECT_TRUE(ValidateToken("b1gs3cr3t-uuid").ok());
}

TEST(ReadTextFileTest, DirectoryCannotBeRead) {
  EXPECT_TRUE(IsInvalid(ReadTextFile(::testing::TempDir()), {"cannot be read"}));
}

TEST(ReadTextFileTest, AnEndlessDeviceIsRefusedNotReadUntilMemoryRunsOut) {
  EXPECT_TRUE(IsInvalid(ReadTextFile("/dev/zero"), {"larger than 4 MiB"}));
}

TEST(ClosestKeyTest, SuggestsOnlyPlausibleTypos) {
  EXPECT_EQ(ClosestKey("servers-list", {"server-lists", "namespace"}), "server-lists");
  EXPECT_EQ(ClosestKey("TOKEN", {"token", "tokenFile"}), "token");
  EXPECT_EQ(ClosestKey("colour", {"server-lists", "namespace"}), "");
}

}  // namespace
}  // namespace registry::conf
