// SPDX-License-Identifier: Apache-2.0
// tests/tools/event_json_test.cc
//
// The JSON lines of `registryctl watch` (tools/event_json.h): the exact format, escaping, and
// arbitrary bytes, which must still give valid JSON.
#include "tools/event_json.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace registry::tools {
namespace {

DataChangedEvent Event(DataChangedEvent::Type type, std::string key,
                       std::optional<std::string> value) {
  DataChangedEvent event;
  event.type = type;
  event.key = std::move(key);
  event.value = std::move(value);
  return event;
}

std::string Quoted(const std::string& bytes) {
  std::string out;
  AppendJsonString(bytes, &out);
  return out;
}

TEST(EventJsonTest, EventIsOneCompactObjectWithTypeKeyAndValue) {
  EXPECT_EQ(EventJson(Event(DataChangedEvent::Type::kAdded, "/a/b", "v")),
            R"({"type":"ADDED","key":"/a/b","value":"v"})");
  EXPECT_EQ(EventJson(Event(DataChangedEvent::Type::kUpdated, "/a", "")),
            R"({"type":"UPDATED","key":"/a","value":""})");
}

TEST(EventJsonTest, UnknownValueOfADeletedKeyIsNull) {
  EXPECT_EQ(EventJson(Event(DataChangedEvent::Type::kDeleted, "/gone", std::nullopt)),
            R"({"type":"DELETED","key":"/gone","value":null})");
}

TEST(EventJsonTest, QuotesBackslashesAndControlCharactersAreEscaped) {
  EXPECT_EQ(Quoted("say \"hi\" \\ now"), R"("say \"hi\" \\ now")");
  EXPECT_EQ(Quoted("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(Quoted(std::string("\0\x01\x1f", 3)), R"("\u0000\u0001\u001f")");
}

TEST(EventJsonTest, ValidUtf8IsCopiedUnchanged) {
  const std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // é € 😀
  EXPECT_EQ(Quoted(text), "\"" + text + "\"");
  std::string out;
  EXPECT_TRUE(AppendJsonString(text, &out));
}

TEST(EventJsonTest, InvalidUtf8BytesBecomeReplacementCharactersAndTheValueAlsoComesAsBase64) {
  // A lone continuation byte, a truncated sequence, an overlong form and a surrogate.
  for (const std::string bad : {"\x80", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80"}) {
    std::string out;
    EXPECT_FALSE(AppendJsonString(bad, &out)) << out;
    EXPECT_EQ(out.find('\x80'), std::string::npos) << out;
  }
  EXPECT_EQ(EventJson(Event(DataChangedEvent::Type::kAdded, "/bin", std::string("\0\xff", 2))),
            R"({"type":"ADDED","key":"/bin","value":"\u0000\ufffd","value_base64":"AP8="})");
}

TEST(EventJsonTest, EveryByteValueGivesJsonThatAParserAccepts) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string line = EventJson(Event(DataChangedEvent::Type::kUpdated, "/k", all));
  nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(parsed.is_discarded()) << line;
  EXPECT_EQ(parsed["type"], "UPDATED");
  EXPECT_EQ(parsed["value_base64"].get<std::string>().size(), 344u);  // 256 bytes in base64
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace registry::tools
