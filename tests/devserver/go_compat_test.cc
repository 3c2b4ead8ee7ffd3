// SPDX-License-Identifier: Apache-2.0
#include "devserver/go_compat.h"

#include "absl/strings/escaping.h"
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

std::string GoJson(absl::string_view text) {
  std::string out;
  AppendGoJsonString(text, &out);
  return out;
}

TEST(GoCompatTest, GoJsonStringEscapesLikeJsonMarshal) {
  EXPECT_EQ(GoJson(""), "\"\"");
  EXPECT_EQ(GoJson("a/b c~\x7f"), "\"a/b c~\x7f\"");  // DEL passes, as in Go
  EXPECT_EQ(GoJson("q\"b\\"), "\"q\\\"b\\\\\"");
  EXPECT_EQ(GoJson("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(GoJson(std::string("\0\x01\x1f", 3)), "\"\\u0000\\u0001\\u001f\"");
  EXPECT_EQ(GoJson("<a&b>"), "\"\\u003ca\\u0026b\\u003e\"");
  EXPECT_EQ(GoJson("\xE2\x80\xA8\xE2\x80\xA9"), "\"\\u2028\\u2029\"");
}

TEST(GoCompatTest, GoJsonStringKeepsValidUtf8AndReplacesEachInvalidByte) {
  // 2-, 3- and 4-byte sequences, including the edges of each range.
  const std::string valid =
      "\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF";
  EXPECT_EQ(GoJson(valid), "\"" + valid + "\"");
  const struct {
    const char* bytes;
    const char* want;
  } cases[] = {
      {"a\xFF"
       "b",
       "\"a\\ufffdb\""},                                         // never valid
      {"\xC0\xAF", "\"\\ufffd\\ufffd\""},                        // overlong '/'
      {"\xE0\x80\xAF", "\"\\ufffd\\ufffd\\ufffd\""},             // overlong 3-byte
      {"\xED\xA0\x80", "\"\\ufffd\\ufffd\\ufffd\""},             // a surrogate
      {"\xF4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},  // above U+10FFFF
      {"\xE2\x82", "\"\\ufffd\\ufffd\""},                        // cut short
      {"\xE2\x82z", "\"\\ufffd\\ufffdz\""},
  };
  for (const auto& c : cases) EXPECT_EQ(GoJson(c.bytes), c.want) << absl::CHexEscape(c.bytes);
}

}  // namespace
}  // namespace registry::devserver
