// ForEachListingEntry must read exactly what consul::ParseKvListResponse reads, and refuse what it
// cannot read (the engine then falls back to the general parser).
#include "watch/listing_parser.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "consul/kv.h"
#include "gtest/gtest.h"

namespace registry::watch {
namespace {

// The entries ForEachListingEntry reads from `body`, values decoded, or nullopt if it refuses
// the body or a value is not base64.
std::optional<std::vector<consul::DirEntry>> ParseListingBody(absl::string_view body) {
  std::vector<consul::DirEntry> entries;
  const bool read = ForEachListingEntry(body, [&entries](const ListingEntryView& view) {
    consul::DirEntry entry;
    if (!absl::Base64Unescape(view.value_base64, &entry.value)) return false;
    entry.key = std::string(view.key);
    entry.session = std::string(view.session);
    entry.flags = view.flags;
    entry.lock_index = view.lock_index;
    entry.create_index = view.create_index;
    entry.modify_index = view.modify_index;
    entries.push_back(std::move(entry));
    return true;
  });
  if (!read) return std::nullopt;
  return entries;
}

std::vector<consul::DirEntry> Reference(const std::string& body) {
  consul::HttpRequest request;
  request.path = "/v1/kv/ns?recurse";
  consul::HttpResponse response;
  response.status = 200;
  response.headers = {{"X-Consul-Index", "7"}};
  response.body = body;
  absl::StatusOr<consul::KvListResult> result = consul::ParseKvListResponse(request, response);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->entries : std::vector<consul::DirEntry>{};
}

void ExpectSameAsReference(const std::string& body) {
  std::optional<std::vector<consul::DirEntry>> fast = ParseListingBody(body);
  ASSERT_TRUE(fast.has_value()) << body;
  EXPECT_EQ(*fast, Reference(body)) << body;
}

TEST(ListingParserTest, ReadsEveryDirEntryFieldLikeTheGeneralParser) {
  ExpectSameAsReference(
      R"([{"LockIndex":2,"Key":"ns/a","Flags":42,"Value":"aGVsbG8=","Session":"s-1",)"
      R"("CreateIndex":5,"ModifyIndex":9},)"
      R"({"LockIndex":0,"Key":"ns/b","Flags":0,"Value":null,"CreateIndex":6,"ModifyIndex":6}])");
}

TEST(ListingParserTest, DecodesStringEscapesInKeys) {
  ExpectSameAsReference(
      R"([{"Key":"ns/q\"b\\s\/\u00e9\ud83d\ude00\n\t","Value":"eA==","Flags":0,"LockIndex":0,)"
      R"("CreateIndex":1,"ModifyIndex":1}])");
}

TEST(ListingParserTest, SkipsUnknownFieldsOfAnyType) {
  ExpectSameAsReference(
      R"( [ { "Namespace" : "default", "Extra": {"a":[1,2.5e3,true,false,null,{"b":"c"}]},)"
      R"( "Key":"ns/x", "Value":"", "Flags":1, "LockIndex":0, "CreateIndex":3,)"
      R"( "ModifyIndex":4 } ] )");
}

TEST(ListingParserTest, ReadsAnEmptyArray) {
  std::optional<std::vector<consul::DirEntry>> fast = ParseListingBody(" [ ] ");
  ASSERT_TRUE(fast.has_value());
  EXPECT_TRUE(fast->empty());
}

TEST(ListingParserTest, RefusesMalformedBodies) {
  const char* bodies[] = {
      "",
      "{}",
      R"([{"Key":"ns/a","CreateIndex":1,"ModifyIndex":1})",                // unterminated array
      R"([{"Value":"eA==","CreateIndex":1,"ModifyIndex":1}])",             // no Key
      R"([{"Key":"ns/a","CreateIndex":1}])",                               // no ModifyIndex
      R"([{"Key":"ns/a","CreateIndex":1,"ModifyIndex":1.5}])",             // fractional index
      R"([{"Key":"ns/a","CreateIndex":1,"ModifyIndex":-1}])",              // negative index
      R"([{"Key":"ns/a","CreateIndex":1,"ModifyIndex":1}] x)",             // trailing garbage
      R"([{"Key":"ns/a","Value":"!!","CreateIndex":1,"ModifyIndex":1}])",  // bad base64
      "[{\"Key\":\"ns/\x01\",\"CreateIndex\":1,\"ModifyIndex\":1}]",       // raw control char
      R"([{"Key":"ns/\ud83d","CreateIndex":1,"ModifyIndex":1}])",          // lone surrogate
      R"([{"Key":"ns/a","CreateIndex":1,"ModifyIndex":99999999999999999999}])",  // overflow
  };
  for (const char* body : bodies) EXPECT_FALSE(ParseListingBody(body).has_value()) << body;
}

// Expects both parsers to refuse `body`.
void ExpectBothRefuse(const std::string& body) {
  EXPECT_FALSE(ParseListingBody(body).has_value()) << body;
  consul::HttpResponse response;
  response.status = 200;
  response.headers = {{"X-Consul-Index", "7"}};
  response.body = body;
  EXPECT_FALSE(consul::ParseKvListResponse({}, response).ok()) << body;
}

// Numbers follow JSON's grammar, as in the general parser: no leading zeros, a digit on both
// sides of a '.', no bare sign, and nothing beyond a double's range (found by
// tests/fuzz/listing_differ_fuzzer: "ModifyIndex":06 was read as 6).
TEST(ListingParserTest, NumbersFollowJsonGrammarLikeTheGeneralParser) {
  ExpectBothRefuse(R"([{"Key":"ns/a","CreateIndex":1,"ModifyIndex":06}])");
  ExpectBothRefuse(R"([{"Key":"ns/a","Flags":00,"CreateIndex":1,"ModifyIndex":1}])");
  for (const char* number :
       {"01", "-", "+1", "1.", ".5", "1-2", "--1", "1e999", "-01.5", "0x1", "1e", "1e+"}) {
    ExpectBothRefuse(std::string(R"([{"Key":"ns/a","X":)") + number +
                     R"(,"CreateIndex":1,"ModifyIndex":1}])");
  }
  ExpectSameAsReference(R"([{"Key":"ns/a","X":[0,-0,-0.5,10,123.0125,1e250,-2E-999,0e99999],)"
                        R"("CreateIndex":1,"ModifyIndex":1}])");
}

// JSON text is UTF-8: the general parser refuses a body with any other byte sequence in a
// string, so the fast one must too, or a watch would report keys the rest of the client never
// accepts (found by tests/fuzz/listing_differ_fuzzer: a key "ns/\xFF" outside the scope).
TEST(ListingParserTest, RefusesStringsThatAreNotUtf8LikeTheGeneralParser) {
  const std::string bad[] = {"\xFF",         "\xC3",         "\xC0\xAF",
                             "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                             "\x80",         "\xF0\x9F\x98"};
  for (const std::string& bytes : bad) {
    for (const std::string& body :
         {R"([{"Key":"ns/)" + bytes + R"(","CreateIndex":1,"ModifyIndex":1}])",
          R"([{"Key":"ns/a","Session":"s)" + bytes + R"(","CreateIndex":1,"ModifyIndex":1}])",
          R"([{"Key":"ns/a","X)" + bytes + R"(":1,"CreateIndex":1,"ModifyIndex":1}])",
          R"([{"Key":"ns/a\n)" + bytes + R"(","CreateIndex":1,"ModifyIndex":1}])"}) {
      ExpectBothRefuse(body);
    }
  }
  // Well-formed sequences of every length, raw and after an escape, are read as they are.
  ExpectSameAsReference(
      "[{\"Key\":\"ns/\xC3\xA9\xE2\x80\xA8\xF0\x9F\x98\x80\\n\xF4\x8F\xBF\xBF\","
      "\"Value\":null,\"CreateIndex\":1,\"ModifyIndex\":1}]");
}

}  // namespace
}  // namespace registry::watch
