// SPDX-License-Identifier: Apache-2.0
// ForEachListingEntry must read exactly what ParseKvListResponse reads, and refuse what it cannot
// read (the watch engine then falls back to the general parser); ParseKvReadAnswer tells the
// answers a watch can use from failures.
#include "consul/kv_listing_decoder.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "consul/errors.h"
#include "consul/kv.h"
#include "gtest/gtest.h"

namespace registry::consul {
namespace {

// The entries ForEachListingEntry reads from `body`, values decoded, or nullopt if it refuses
// the body or a value is not base64.
std::optional<std::vector<DirEntry>> ParseListingBody(absl::string_view body) {
  std::vector<DirEntry> entries;
  const bool read = ForEachListingEntry(body, [&entries](const ListingEntryView& view) {
    DirEntry entry;
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

std::vector<DirEntry> Reference(const std::string& body) {
  HttpRequest request;
  request.path = "/v1/kv/ns?recurse";
  HttpResponse response;
  response.status = 200;
  response.headers = {{"X-Consul-Index", "7"}};
  response.body = body;
  absl::StatusOr<KvListResult> result = ParseKvListResponse(request, response);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->entries : std::vector<DirEntry>{};
}

void ExpectSameAsReference(const std::string& body) {
  std::optional<std::vector<DirEntry>> fast = ParseListingBody(body);
  ASSERT_TRUE(fast.has_value()) << body;
  EXPECT_EQ(*fast, Reference(body)) << body;
}

TEST(KvListingDecoderTest, ReadsEveryDirEntryFieldLikeTheGeneralParser) {
  ExpectSameAsReference(
      R"([{"LockIndex":2,"Key":"ns/a","Flags":42,"Value":"aGVsbG8=","Session":"s-1",)"
      R"("CreateIndex":5,"ModifyIndex":9},)"
      R"({"LockIndex":0,"Key":"ns/b","Flags":0,"Value":null,"CreateIndex":6,"ModifyIndex":6}])");
}

TEST(KvListingDecoderTest, DecodesStringEscapesInKeys) {
  ExpectSameAsReference(
      R"([{"Key":"ns/q\"b\\s\/\u00e9\ud83d\ude00\n\t","Value":"eA==","Flags":0,"LockIndex":0,)"
      R"("CreateIndex":1,"ModifyIndex":1}])");
}

TEST(KvListingDecoderTest, SkipsUnknownFieldsOfAnyType) {
  ExpectSameAsReference(
      R"( [ { "Namespace" : "default", "Extra": {"a":[1,2.5e3,true,false,null,{"b":"c"}]},)"
      R"( "Key":"ns/x", "Value":"", "Flags":1, "LockIndex":0, "CreateIndex":3,)"
      R"( "ModifyIndex":4 } ] )");
}

TEST(KvListingDecoderTest, ReadsAnEmptyArray) {
  std::optional<std::vector<DirEntry>> fast = ParseListingBody(" [ ] ");
  ASSERT_TRUE(fast.has_value());
  EXPECT_TRUE(fast->empty());
}

TEST(KvListingDecoderTest, RefusesMalformedBodies) {
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
  HttpResponse response;
  response.status = 200;
  response.headers = {{"X-Consul-Index", "7"}};
  response.body = body;
  EXPECT_FALSE(ParseKvListResponse({}, response).ok()) << body;
}

// Numbers follow JSON's grammar, as in the general parser: no leading zeros, a digit on both
// sides of a '.', no bare sign, and nothing beyond a double's range (found by
// tests/fuzz/listing_differ_fuzzer: "ModifyIndex":06 was read as 6).
TEST(KvListingDecoderTest, NumbersFollowJsonGrammarLikeTheGeneralParser) {
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
TEST(KvListingDecoderTest, RefusesStringsThatAreNotUtf8LikeTheGeneralParser) {
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

TEST(KvListingDecoderTest, ForEachListingEntryViewsTheBodyAndStopsWhenAsked) {
  const std::string body =
      R"([{"Key":"ns/a","Value":"eA==","Session":"s\"1","CreateIndex":1,"ModifyIndex":2},)"
      R"({"Key":"ns/b","Value":null,"CreateIndex":3,"ModifyIndex":4}])";
  std::vector<std::string> seen;
  EXPECT_TRUE(ForEachListingEntry(body, [&](const ListingEntryView& entry) {
    seen.push_back(absl::StrCat(entry.key, "|", entry.value_base64, "|", entry.session, "|",
                                entry.create_index, "|", entry.modify_index));
    return true;
  }));
  EXPECT_EQ(seen, (std::vector<std::string>{"ns/a|eA==|s\"1|1|2", "ns/b|||3|4"}));
  int visits = 0;
  EXPECT_FALSE(ForEachListingEntry(body, [&](const ListingEntryView&) { return ++visits < 1; }));
  EXPECT_EQ(visits, 1);
}

HttpResponse Answer(int status, std::string body, std::string index = "12") {
  HttpResponse response;
  response.status = status;
  if (!index.empty()) response.headers = {{"X-Consul-Index", index}};
  response.body = std::move(body);
  return response;
}

TEST(ParseKvReadAnswerTest, FoundAndNothingThereAreUsableWithTheirIndex) {
  HttpRequest request;
  request.path = "/v1/kv/ns?recurse";
  absl::StatusOr<QueryMeta> found = ParseKvReadAnswer(request, Answer(200, "[]"));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->index, 12u);
  EXPECT_TRUE(KvReadFound(Answer(200, "[]")));
  absl::StatusOr<QueryMeta> absent = ParseKvReadAnswer(request, Answer(404, ""));
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_EQ(absent->index, 12u);
  EXPECT_FALSE(KvReadFound(Answer(404, "")));
}

TEST(ParseKvReadAnswerTest, AnyOtherAnswerIsItsFailure) {
  HttpRequest request;
  request.path = "/v1/kv/ns?recurse";
  EXPECT_TRUE(absl::IsPermissionDenied(
      ParseKvReadAnswer(request, Answer(403, "Permission denied")).status()));
  absl::Status no_leader = ParseKvReadAnswer(request, Answer(500, "No cluster leader")).status();
  EXPECT_TRUE(absl::IsUnavailable(no_leader)) << no_leader;
  EXPECT_EQ(HttpStatusOf(no_leader), 500);
  EXPECT_TRUE(absl::IsInternal(ParseKvReadAnswer(request, Answer(204, "")).status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseKvReadAnswer(request, Answer(200, "[]", "")).status()));
  EXPECT_TRUE(
      absl::IsCancelled(ParseKvReadAnswer(request, absl::CancelledError("closed")).status()));
}

}  // namespace
}  // namespace registry::consul
