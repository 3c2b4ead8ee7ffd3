// SPDX-License-Identifier: Apache-2.0
// tests/tools/backup_file_test.cc
//
// The files of `registryctl export` / `import` (tools/ctl_backup_file.h): written byte for byte as
// `consul kv export` writes them (the expected texts below are what Consul 1.8.7's CLI printed
// for the same keys), read back exactly (values are any bytes), and every way a file can be bad
// named by its entry.
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/ctl_backup_file.h"

namespace registry::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

TEST(BackupFileTest, FormatIsConsulKvExportsByteForByte) {
  // `consul kv put ns/a/b 'hello <&>'; consul kv put -flags=42 ns/a/c x;
  //  printf '\xff\xfe\x00z' | consul kv put ns/bin -; consul kv put ns/empty ""; consul kv export
  //  ns/`
  const std::vector<KvFileEntry> entries = {{"ns/a/b", 0, "hello <&>"},
                                            {"ns/a/c", 42, "x"},
                                            {"ns/bin", 0, std::string("\xff\xfe\0z", 4)},
                                            {"ns/empty", 0, ""},
                                            {"ns/maxflags", 18446744073709551615u, "v"},
                                            {"ns/q/\"quote\\", 0, "v"},
                                            {"ns/uni/\xc3\xa9", 0, "\xc3\xbc"}};
  EXPECT_EQ(
      FormatKvFile(entries),
      "[\n"
      "\t{\n\t\t\"key\": \"ns/a/b\",\n\t\t\"flags\": 0,\n\t\t\"value\": \"aGVsbG8gPCY+\"\n\t},\n"
      "\t{\n\t\t\"key\": \"ns/a/c\",\n\t\t\"flags\": 42,\n\t\t\"value\": \"eA==\"\n\t},\n"
      "\t{\n\t\t\"key\": \"ns/bin\",\n\t\t\"flags\": 0,\n\t\t\"value\": \"//4Aeg==\"\n\t},\n"
      "\t{\n\t\t\"key\": \"ns/empty\",\n\t\t\"flags\": 0,\n\t\t\"value\": \"\"\n\t},\n"
      "\t{\n\t\t\"key\": \"ns/maxflags\",\n\t\t\"flags\": 18446744073709551615,\n"
      "\t\t\"value\": \"dg==\"\n\t},\n"
      "\t{\n\t\t\"key\": \"ns/q/\\\"quote\\\\\",\n\t\t\"flags\": 0,\n"
      "\t\t\"value\": \"dg==\"\n\t},\n"
      "\t{\n\t\t\"key\": \"ns/uni/\xc3\xa9\",\n\t\t\"flags\": 0,\n\t\t\"value\": \"w7w=\"\n\t}\n"
      "]\n");
  EXPECT_EQ(FormatKvFile({}), "[]\n") << "what `consul kv export` prints for no key";
}

TEST(BackupFileTest, StringsAreEscapedAsGosEncodingJsonEscapesThem) {
  EXPECT_EQ(GoJsonString("a<b>&c"), "\"a\\u003cb\\u003e\\u0026c\"");
  EXPECT_EQ(GoJsonString("\n\r\t\x01\x1f\x7f"), "\"\\n\\r\\t\\u0001\\u001f\x7f\"");
  EXPECT_EQ(GoJsonString("\xe2\x80\xa8\xe2\x80\xa9"), "\"\\u2028\\u2029\"");
  EXPECT_EQ(GoJsonString("ok\xff!"), "\"ok\\ufffd!\"") << "invalid UTF-8";
  EXPECT_EQ(GoJsonString("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
}

TEST(BackupFileTest, Base64IsStandardAndPadded) {
  std::string decoded;
  ASSERT_TRUE(DecodeBase64("//4Aeg==", &decoded));
  EXPECT_EQ(decoded, std::string("\xff\xfe\0z", 4));
  ASSERT_TRUE(DecodeBase64("", &decoded));
  EXPECT_EQ(decoded, "");
  ASSERT_TRUE(DecodeBase64("YWJj", &decoded));
  EXPECT_EQ(decoded, "abc");
  for (const char* bad : {"abc", "YW=j", "Y===", "YWJj=", "_-8=", "YW Jj", "YWJj\n"}) {
    EXPECT_FALSE(DecodeBase64(bad, &decoded)) << bad;
  }
}

TEST(BackupFileTest, EveryByteValueRoundTrips) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  for (size_t len : {0u, 1u, 2u, 3u, 255u, 256u}) {
    const std::vector<KvFileEntry> entries = {{"ns/k", 0, all.substr(0, len)}};
    absl::StatusOr<std::vector<KvFileEntry>> parsed = ParseKvFile(FormatKvFile(entries));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, entries) << len;
  }
}

TEST(BackupFileTest, ParseTakesWhatConsulsCliTakes) {
  // Flags absent (0), members in any order, other members ignored, escapes of any kind.
  absl::StatusOr<std::vector<KvFileEntry>> parsed = ParseKvFile(
      R"([{"value":"eA==","key":"ns/a\u003cb"},{"key":"ns/c","flags":7,"value":"","session":"x"}])");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(*parsed, ElementsAre(KvFileEntry{"ns/a<b", 0, "x"}, KvFileEntry{"ns/c", 7, ""}));
  EXPECT_THAT(*ParseKvFile("[]"), IsEmpty());
}

TEST(BackupFileTest, ATruncatedFileSaysSo) {
  const std::string whole = FormatKvFile({{"ns/a", 0, "v1"}, {"ns/b", 0, "v2"}});
  for (size_t cut : {whole.size() - 2, whole.size() / 2, size_t{1}}) {
    absl::StatusOr<std::vector<KvFileEntry>> parsed = ParseKvFile(whole.substr(0, cut));
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("looks truncated")) << cut;
  }
  EXPECT_THAT(ParseKvFile("").status().message(), HasSubstr("empty"));
}

TEST(BackupFileTest, ABadFileSaysWhatIsWrongAndABadEntryIsNamedByIndexAndKey) {
  EXPECT_THAT(ParseKvFile("[] trailing").status().message(), HasSubstr("not JSON"));
  EXPECT_THAT(ParseKvFile("{\"key\":\"ns/a\"}").status().message(),
              HasSubstr("the file holds a JSON object, not an array"));
  const std::pair<const char*, const char*> cases[] = {
      {R"([{"key":"ns/a","value":""},7])", "entry .[1]: is a JSON number, not an object"},
      {R"([{"value":""}])", "entry .[0]: has no \"key\" string"},
      {R"([{"key":3,"value":""}])", "entry .[0]: has no \"key\" string"},
      {R"([{"key":"ns/a"}])", "entry .[0] 'ns/a': has no \"value\" string"},
      {R"([{"key":"ns/a","value":null}])", "entry .[0] 'ns/a': has no \"value\" string"},
      {R"([{"key":"ns/a","value":"e"}])", "entry .[0] 'ns/a': \"value\" is not standard base64"},
      {R"([{"key":"ns/a","flags":-1,"value":""}])",
       "entry .[0] 'ns/a': \"flags\" is -1, not an unsigned 64-bit integer"},
      {R"([{"key":"ns/a","flags":1.5,"value":""}])", "entry .[0] 'ns/a': \"flags\" is 1.5"},
      {R"([{"key":"ns/a","flags":"0","value":""}])", "entry .[0] 'ns/a': \"flags\" is \"0\""},
  };
  for (const auto& [text, message] : cases) {
    KvFileFault fault;
    absl::StatusOr<std::vector<KvFileEntry>> parsed = ParseKvFile(text, &fault);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(parsed.status().message()), StartsWith(message)) << text;
    EXPECT_NE(fault.index, KvFileFault::kNoEntry) << text;
  }
}

TEST(BackupFileTest, RepositoryEntriesAreTheKeysBelowTheStorePrefix) {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> mapped =
      ToRepositoryEntries({{"ns/a", 0, "1"}, {"ns/a/b/c", 0, std::string("\0", 1)}}, "ns/");
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_THAT(*mapped, ElementsAre(Pair("/a", "1"), Pair("/a/b/c", std::string("\0", 1))));
}

TEST(BackupFileTest, EveryEntryIsCheckedAndTheFirstBadOneNamed) {
  const std::pair<std::vector<KvFileEntry>, const char*> cases[] = {
      {{{"ns/a", 0, ""}, {"other/b", 0, ""}},
       "entry .[1] 'other/b': is outside this namespace, whose keys start with 'ns/'"},
      {{{"nsx/b", 0, ""}}, "entry .[0] 'nsx/b': is outside this namespace"},
      {{{"ns", 0, ""}}, "entry .[0] 'ns': is outside this namespace"},
      {{{"ns/", 0, ""}}, "entry .[0] 'ns/': is the namespace's own folder"},
      {{{"ns/a", 0, ""}, {"ns/lock/l/", 0, ""}}, "entry .[1] 'ns/lock/l/': is a folder key"},
      {{{"ns/a", 5, ""}}, "entry .[0] 'ns/a': has flags 5, which import would lose"},
      {{{"ns/a", 0, "1"}, {"ns/b", 0, ""}, {"ns/a", 0, "2"}},
       "entry .[2] 'ns/a': comes twice in the file (first as entry .[0])"},
  };
  for (const auto& [entries, message] : cases) {
    KvFileFault fault;
    absl::StatusOr<std::vector<std::pair<std::string, std::string>>> mapped =
        ToRepositoryEntries(entries, "ns/", &fault);
    EXPECT_EQ(mapped.status().code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(mapped.status().message()), StartsWith(message));
    EXPECT_EQ(fault.key, entries[fault.index].key) << message;
  }
}

}  // namespace
}  // namespace registry::tools
