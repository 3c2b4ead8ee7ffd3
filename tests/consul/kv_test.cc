// SPDX-License-Identifier: Apache-2.0
#include "consul/kv.h"

#include <string>

#include "consul/url.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr char kEntryA[] =
    R"([{"LockIndex":1,"Key":"a","Flags":7,"Value":"aGVsbG8=","Session":"s-1",)"
    R"("CreateIndex":10,"ModifyIndex":12}])";

HttpRequest GetRequest(absl::string_view key) { return *BuildKvGetRequest(key, {}); }

// --- request shapes ---

TEST(KvRequestTest, GetIsAPlainGetOnTheKeyPath) {
  absl::StatusOr<HttpRequest> request = BuildKvGetRequest("app/config", {});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->method, HttpMethod::kGet);
  EXPECT_EQ(request->path, "/v1/kv/app/config");
  EXPECT_THAT(request->params, IsEmpty());
  EXPECT_EQ(request->body, "");
}

TEST(KvRequestTest, BlockingGetCarriesIndexAndMillisecondWait) {
  absl::StatusOr<HttpRequest> request =
      BuildKvGetRequest("a", {.index = 9, .wait = absl::Seconds(90)});
  ASSERT_TRUE(request.ok());
  EXPECT_THAT(request->params, ElementsAre(Pair("index", "9"), Pair("wait", "90000ms")));
  EXPECT_EQ(request->wait, absl::Seconds(90));
}

TEST(KvRequestTest, RawGetSendsRawFlag) {
  absl::StatusOr<HttpRequest> request = BuildKvGetRawRequest("a", {.stale = true});
  ASSERT_TRUE(request.ok());
  EXPECT_THAT(request->params, ElementsAre(Pair("raw", ""), Pair("stale", "")));
}

TEST(KvRequestTest, ListSendsRecurseAndAllowsAnEmptyPrefix) {
  absl::StatusOr<HttpRequest> request = BuildKvListRequest("", {.index = 3});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->path, "/v1/kv/");
  EXPECT_THAT(request->params, ElementsAre(Pair("recurse", ""), Pair("index", "3")));
}

TEST(KvRequestTest, KeysSendsKeysAndSeparator) {
  absl::StatusOr<HttpRequest> request = BuildKvKeysRequest("ns/", "/", {});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->path, "/v1/kv/ns/");
  EXPECT_THAT(request->params, ElementsAre(Pair("keys", ""), Pair("separator", "/")));
}

TEST(KvRequestTest, KeysWithoutSeparatorSendsOnlyKeys) {
  absl::StatusOr<HttpRequest> request = BuildKvKeysRequest("ns", "", {});
  ASSERT_TRUE(request.ok());
  EXPECT_THAT(request->params, ElementsAre(Pair("keys", "")));
}

TEST(KvRequestTest, KeysAreEscapedButKeepTheirSlashes) {
  absl::StatusOr<HttpRequest> request = BuildKvGetRequest("a b/%?#/\xC3\xA9~x.y-z_", {});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->path, "/v1/kv/a%20b/%25%3F%23/%C3%A9~x.y-z_");
}

TEST(KvRequestTest, PutSendsTheValueAsBodyWithFlags) {
  absl::StatusOr<HttpRequest> request = BuildKvPutRequest("a", "value", {.flags = 42});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->method, HttpMethod::kPut);
  EXPECT_EQ(request->path, "/v1/kv/a");
  EXPECT_THAT(request->params, ElementsAre(Pair("flags", "42")));
  EXPECT_EQ(request->body, "value");
}

TEST(KvRequestTest, PutKeepsBinaryValuesIntact) {
  std::string value("a\0b\xff", 4);
  absl::StatusOr<HttpRequest> request = BuildKvPutRequest("a", value, {});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->body, value);
  EXPECT_THAT(request->params, IsEmpty());
}

TEST(KvRequestTest, PutCasZeroMeansCreateOnlyAndIsSent) {
  absl::StatusOr<HttpRequest> request = BuildKvPutRequest("a", "v", {.cas = 0});
  ASSERT_TRUE(request.ok());
  EXPECT_THAT(request->params, ElementsAre(Pair("cas", "0")));
}

TEST(KvRequestTest, PutAcquireAndReleaseCarryTheSession) {
  absl::StatusOr<HttpRequest> acquire = BuildKvPutRequest("lock", "me", {.acquire = "sid"});
  ASSERT_TRUE(acquire.ok());
  EXPECT_THAT(acquire->params, ElementsAre(Pair("acquire", "sid")));
  absl::StatusOr<HttpRequest> release =
      BuildKvPutRequest("lock", "", {.flags = 1, .release = "sid"});
  ASSERT_TRUE(release.ok());
  EXPECT_THAT(release->params, ElementsAre(Pair("flags", "1"), Pair("release", "sid")));
}

TEST(KvRequestTest, OnlyReadsAndAcquiresAreSafeToReplay) {
  // A replayed check-and-set fails although the first apply succeeded, and so answers a replayed
  // release; a replayed plain write or delete may undo another client's write made in between; an
  // acquire by the holder repeats safely.
  EXPECT_FALSE(BuildKvPutRequest("a", "v", {.cas = 0})->replay_safe);
  EXPECT_FALSE(BuildKvDeleteRequest("a", {.cas = 17})->replay_safe);
  EXPECT_FALSE(BuildKvPutRequest("a", "v", {})->replay_safe);
  EXPECT_FALSE(BuildKvDeleteRequest("a", {})->replay_safe);
  EXPECT_FALSE(BuildKvDeleteRequest("a/", {.recurse = true})->replay_safe);
  EXPECT_TRUE(BuildKvPutRequest("a", "v", {.acquire = "sid"})->replay_safe);
  EXPECT_FALSE(BuildKvPutRequest("a", "v", {.release = "sid"})->replay_safe);
  EXPECT_TRUE(BuildKvGetRequest("a", {})->replay_safe);
}

TEST(KvRequestTest, DeleteShapes) {
  absl::StatusOr<HttpRequest> plain = BuildKvDeleteRequest("a", {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->method, HttpMethod::kDelete);
  EXPECT_THAT(plain->params, IsEmpty());
  absl::StatusOr<HttpRequest> tree = BuildKvDeleteRequest("a/", {.recurse = true});
  ASSERT_TRUE(tree.ok());
  EXPECT_THAT(tree->params, ElementsAre(Pair("recurse", "")));
  absl::StatusOr<HttpRequest> cas = BuildKvDeleteRequest("a", {.cas = 17});
  ASSERT_TRUE(cas.ok());
  EXPECT_THAT(cas->params, ElementsAre(Pair("cas", "17")));
}

TEST(UrlTest, BuildUrlEscapesParamValuesAndRendersBareFlags) {
  HttpRequest request;
  request.server = "http://h:1";
  request.path = "/v1/kv/a";
  request.params = {{"recurse", ""}, {"dc", "d c&x"}};
  EXPECT_EQ(BuildUrl(request), "http://h:1/v1/kv/a?recurse&dc=d%20c%26x");
}

// --- client-side validation ---

TEST(KvValidationTest, EmptyKeyIsRejectedForSingleKeyOperations) {
  EXPECT_TRUE(absl::IsInvalidArgument(BuildKvGetRequest("", {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildKvGetRawRequest("", {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildKvPutRequest("", "v", {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildKvDeleteRequest("", {}).status()));
}

TEST(KvValidationTest, EmptyPrefixIsAllowedForListingsAndRecursiveDelete) {
  EXPECT_TRUE(BuildKvListRequest("", {}).ok());
  EXPECT_TRUE(BuildKvKeysRequest("", "/", {}).ok());
  EXPECT_TRUE(BuildKvDeleteRequest("", {.recurse = true}).ok());
}

TEST(KvValidationTest, LeadingSlashIsRejectedNamingTheKey) {
  absl::Status status = BuildKvPutRequest("/abs/key", "v", {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("/abs/key"));
  EXPECT_TRUE(absl::IsInvalidArgument(BuildKvListRequest("/x", {}).status()));
}

TEST(KvValidationTest, ControlCharactersInKeysAreRejected) {
  EXPECT_TRUE(absl::IsInvalidArgument(BuildKvGetRequest("a\nb", {}).status()));
}

TEST(KvValidationTest, ValueOfExactlyTheLimitIsAccepted) {
  EXPECT_TRUE(BuildKvPutRequest("a", std::string(kMaxValueBytes, 'x'), {}).ok());
}

TEST(KvValidationTest, ValueOverTheLimitIsRefusedNamingTheKey) {
  absl::Status status = BuildKvPutRequest("big", std::string(kMaxValueBytes + 1, 'x'), {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("big"));
  EXPECT_THAT(status.message(), HasSubstr("524289"));
}

TEST(KvValidationTest, ConflictingPutOptionsAreRefused) {
  EXPECT_TRUE(
      absl::IsInvalidArgument(BuildKvPutRequest("a", "v", {.cas = 1, .acquire = "s"}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      BuildKvPutRequest("a", "v", {.acquire = "s", .release = "s"}).status()));
  absl::Status status = BuildKvPutRequest("a", "v", {.cas = 0, .release = "s"}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("cas"));
}

TEST(KvValidationTest, AcquireWithEmptySessionIsRefused) {
  EXPECT_TRUE(absl::IsInvalidArgument(BuildKvPutRequest("a", "v", {.acquire = ""}).status()));
}

TEST(KvValidationTest, RecurseWithCasOnDeleteIsRefused) {
  absl::Status status = BuildKvDeleteRequest("a", {.recurse = true, .cas = 3}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("recurse"));
}

// --- response parsing ---

TEST(KvParseTest, GetDecodesTheEntryAndMeta) {
  absl::StatusOr<KvGetResult> result =
      ParseKvGetResponse(GetRequest("a"), ReadResponse(200, kEntryA, 12));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->meta.index, 12u);
  EXPECT_TRUE(result->meta.known_leader);
  ASSERT_TRUE(result->entry.has_value());
  EXPECT_EQ(*result->entry, (DirEntry{.key = "a",
                                      .value = "hello",
                                      .flags = 7,
                                      .session = "s-1",
                                      .lock_index = 1,
                                      .create_index = 10,
                                      .modify_index = 12}));
}

TEST(KvParseTest, NullValueIsAnEmptyValue) {
  absl::StatusOr<KvGetResult> result = ParseKvGetResponse(
      GetRequest("a"),
      ReadResponse(200, R"([{"Key":"a","Value":null,"CreateIndex":1,"ModifyIndex":1}])", 1));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->entry->value, "");
  EXPECT_EQ(result->entry->session, "");
}

TEST(KvParseTest, GetNotFoundIsAbsentWithMetaNotAnError) {
  absl::StatusOr<KvGetResult> result =
      ParseKvGetResponse(GetRequest("a"), ReadResponse(404, "", 77));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->entry.has_value());
  EXPECT_EQ(result->meta.index, 77u);
}

TEST(KvParseTest, GetNotFoundWithoutIndexIsDataLoss) {
  EXPECT_TRUE(absl::IsDataLoss(ParseKvGetResponse(GetRequest("a"), Response(404, "")).status()));
}

TEST(KvParseTest, RawGetReturnsTheBareBody) {
  HttpRequest request = *BuildKvGetRawRequest("a", {});
  absl::StatusOr<KvGetRawResult> found =
      ParseKvGetRawResponse(request, ReadResponse(200, "plain\x01", 4));
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->value, "plain\x01");
  absl::StatusOr<KvGetRawResult> absent = ParseKvGetRawResponse(request, ReadResponse(404, "", 4));
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->value.has_value());
}

TEST(KvParseTest, ListDecodesEveryEntry) {
  HttpRequest request = *BuildKvListRequest("p/", {});
  absl::StatusOr<KvListResult> result = ParseKvListResponse(
      request, ReadResponse(200,
                            R"([{"Key":"p/a","Value":"MQ==","CreateIndex":1,"ModifyIndex":2},)"
                            R"({"Key":"p/b/","Value":null,"CreateIndex":3,"ModifyIndex":3}])",
                            3));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->entries.size(), 2u);
  EXPECT_EQ(result->entries[0].value, "1");
  EXPECT_EQ(result->entries[1].key, "p/b/");
}

TEST(KvParseTest, ListNotFoundIsAnEmptyList) {
  absl::StatusOr<KvListResult> result =
      ParseKvListResponse(*BuildKvListRequest("p/", {}), ReadResponse(404, "", 5));
  ASSERT_TRUE(result.ok());
  EXPECT_THAT(result->entries, IsEmpty());
  EXPECT_EQ(result->meta.index, 5u);
}

TEST(KvParseTest, KeysDecodesStringsAndNotFoundIsEmpty) {
  HttpRequest request = *BuildKvKeysRequest("p/", "/", {});
  absl::StatusOr<KvKeysResult> keys =
      ParseKvKeysResponse(request, ReadResponse(200, R"(["p/a","p/b/"])", 9));
  ASSERT_TRUE(keys.ok());
  EXPECT_THAT(keys->keys, ElementsAre("p/a", "p/b/"));
  absl::StatusOr<KvKeysResult> none = ParseKvKeysResponse(request, ReadResponse(404, "", 9));
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(none->keys, IsEmpty());
}

TEST(KvParseTest, KeysWithANonStringIsDataLoss) {
  EXPECT_TRUE(absl::IsDataLoss(
      ParseKvKeysResponse(*BuildKvKeysRequest("p", "", {}), ReadResponse(200, R"(["a",1])", 1))
          .status()));
}

TEST(KvParseTest, PutTrueAndFalseAreResultsNotErrors) {
  HttpRequest request = *BuildKvPutRequest("a", "v", {.cas = 3});
  EXPECT_EQ(ParseKvPutResponse(request, Response(200, "true")).value(), true);
  EXPECT_EQ(ParseKvPutResponse(request, Response(200, "false\n")).value(), false);
}

TEST(KvParseTest, DeleteCasFalseIsAResult) {
  HttpRequest request = *BuildKvDeleteRequest("a", {.cas = 3});
  EXPECT_EQ(ParseKvDeleteResponse(request, Response(200, "false")).value(), false);
}

TEST(KvParseTest, PutWithANonBooleanBodyIsDataLoss) {
  HttpRequest request = *BuildKvPutRequest("a", "v", {});
  EXPECT_TRUE(absl::IsDataLoss(ParseKvPutResponse(request, Response(200, "\"yes\"")).status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseKvPutResponse(request, Response(200, "")).status()));
}

TEST(KvParseTest, MalformedJsonIsDataLoss) {
  EXPECT_TRUE(absl::IsDataLoss(
      ParseKvGetResponse(GetRequest("a"), ReadResponse(200, "[{\"Key\":", 1)).status()));
}

TEST(KvParseTest, TruncatedBodyIsDataLoss) {
  std::string body = kEntryA;
  body.resize(body.size() - 5);
  EXPECT_TRUE(
      absl::IsDataLoss(ParseKvGetResponse(GetRequest("a"), ReadResponse(200, body, 1)).status()));
}

TEST(KvParseTest, BadBase64IsDataLossNamingTheKey) {
  absl::Status status =
      ParseKvGetResponse(
          GetRequest("a"),
          ReadResponse(200, R"([{"Key":"a","Value":"!!!*","CreateIndex":1,"ModifyIndex":1}])", 1))
          .status();
  EXPECT_TRUE(absl::IsDataLoss(status));
  EXPECT_THAT(status.message(), HasSubstr("base64"));
  EXPECT_THAT(status.message(), HasSubstr("'a'"));
}

TEST(KvParseTest, WrongJsonTypesAreDataLoss) {
  for (const char* body : {
           R"({"Key":"a"})",                                                 // not an array
           R"([1])",                                                         // not an object
           R"([{"Key":5,"CreateIndex":1,"ModifyIndex":1}])",                 // Key not a string
           R"([{"Key":"a","Value":5,"CreateIndex":1,"ModifyIndex":1}])",     // Value not a string
           R"([{"Key":"a","CreateIndex":"1","ModifyIndex":1}])",             // index a string
           R"([{"Key":"a","CreateIndex":-1,"ModifyIndex":1}])",              // negative index
           R"([{"Key":"a","CreateIndex":1.5,"ModifyIndex":1}])",             // fractional index
           R"([{"Key":"a","Flags":true,"CreateIndex":1,"ModifyIndex":1}])",  // Flags a bool
           R"([{"Key":"a","CreateIndex":1}])",                               // ModifyIndex missing
           R"([{"Key":"a","Session":[],"CreateIndex":1,"ModifyIndex":1}])",  // Session an array
       }) {
    EXPECT_TRUE(
        absl::IsDataLoss(ParseKvGetResponse(GetRequest("a"), ReadResponse(200, body, 1)).status()))
        << body;
  }
}

TEST(KvParseTest, SeveralEntriesForASingleKeyAreDataLoss) {
  EXPECT_TRUE(absl::IsDataLoss(
      ParseKvGetResponse(GetRequest("a"),
                         ReadResponse(200,
                                      R"([{"Key":"a","CreateIndex":1,"ModifyIndex":1},)"
                                      R"({"Key":"a","CreateIndex":1,"ModifyIndex":1}])",
                                      1))
          .status()));
}

TEST(KvParseTest, MissingIndexOnAReadIsDataLossNotACrash) {
  EXPECT_TRUE(absl::IsDataLoss(
      ParseKvListResponse(*BuildKvListRequest("p", {}), Response(200, kEntryA)).status()));
}

}  // namespace
}  // namespace registry::consul
