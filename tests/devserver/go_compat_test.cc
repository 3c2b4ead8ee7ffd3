#include "integration/devserver/go_compat.h"

#include "gtest/gtest.h"

namespace registry::devserver {
namespace {

TEST(GoCompatTest, ParseGoDurationAcceptsEveryGoSpelling) {
  struct Case {
    const char* text;
    absl::Duration want;
  };
  const Case cases[] = {
      {"1500ms", absl::Milliseconds(1500)},
      {"1.5s", absl::Milliseconds(1500)},
      {"1m30s", absl::Seconds(90)},
      {"2h", absl::Hours(2)},
      {"0", absl::ZeroDuration()},
      {"-1s", absl::Seconds(-1)},
      {"+5s", absl::Seconds(5)},
      {"10ns", absl::Nanoseconds(10)},
      {"7us", absl::Microseconds(7)},
      {"7\xC2\xB5s", absl::Microseconds(7)},
      {"7\xCE\xBCs", absl::Microseconds(7)},
      {".5s", absl::Milliseconds(500)},
      {"1.s", absl::Seconds(1)},
      {"1h1m1s1ms", absl::Hours(1) + absl::Minutes(1) + absl::Seconds(1) + absl::Milliseconds(1)},
  };
  for (const Case& c : cases) {
    absl::StatusOr<absl::Duration> parsed = ParseGoDuration(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status();
    EXPECT_EQ(*parsed, c.want) << c.text;
  }
}

TEST(GoCompatTest, ParseGoDurationRejectsWhatGoRejects) {
  for (const char* text : {"", "abc", "5", "1x", "s", ".s", "1..5s", "-", "1s ", "9999999999h"}) {
    EXPECT_FALSE(ParseGoDuration(text).ok()) << "'" << text << "'";
  }
  EXPECT_EQ(ParseGoDuration("abc").status().message(), "time: invalid duration \"abc\"");
  EXPECT_EQ(ParseGoDuration("5").status().message(), "time: missing unit in duration \"5\"");
}

TEST(GoCompatTest, FormatGoDurationMatchesGoString) {
  EXPECT_EQ(FormatGoDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatGoDuration(absl::Seconds(10)), "10s");
  EXPECT_EQ(FormatGoDuration(absl::Hours(24)), "24h0m0s");
  EXPECT_EQ(FormatGoDuration(absl::Seconds(90)), "1m30s");
  EXPECT_EQ(FormatGoDuration(absl::Milliseconds(1500)), "1.5s");
  EXPECT_EQ(FormatGoDuration(absl::Milliseconds(250)), "250ms");
  EXPECT_EQ(FormatGoDuration(absl::Microseconds(1)), "1\xC2\xB5s");
  EXPECT_EQ(FormatGoDuration(absl::Nanoseconds(10)), "10ns");
  EXPECT_EQ(FormatGoDuration(absl::Seconds(-1)), "-1s");
}

TEST(GoCompatTest, ParseGoUintAcceptsOnlyPlainDecimalDigits) {
  EXPECT_EQ(*ParseGoUint("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseGoUint("0"), 0u);
  for (const char* text : {"", "-1", "+1", " 1", "1e3", "0x10", "abc"}) {
    EXPECT_FALSE(ParseGoUint(text).ok()) << "'" << text << "'";
  }
  EXPECT_EQ(ParseGoUint("abc").status().message(),
            "strconv.ParseUint: parsing \"abc\": invalid syntax");
  EXPECT_EQ(ParseGoUint("18446744073709551616").status().message(),
            "strconv.ParseUint: parsing \"18446744073709551616\": value out of range");
}

TEST(GoCompatTest, GoQuoteEscapesLikePercentQ) {
  EXPECT_EQ(GoQuote("a/b"), "\"a/b\"");
  EXPECT_EQ(GoQuote("say \"hi\"\\\n"), "\"say \\\"hi\\\"\\\\\\n\"");
  EXPECT_EQ(GoQuote(std::string("\x01", 1)), "\"\\x01\"");
}

}  // namespace
}  // namespace registry::devserver
