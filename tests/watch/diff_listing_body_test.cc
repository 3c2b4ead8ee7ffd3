// SPDX-License-Identifier: Apache-2.0
// DiffListingBody must give exactly what parsing the body and calling DiffListing gives, and
// must leave the listener's view untouched when it refuses a body.
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "watch/diff.h"

namespace registry::watch {
namespace {

// The body Consul sends for `entries`, in their order.
std::string Body(const std::vector<consul::DirEntry>& entries) {
  nlohmann::ordered_json body = nlohmann::ordered_json::array();
  for (const consul::DirEntry& entry : entries) {
    nlohmann::ordered_json object;
    object["LockIndex"] = entry.lock_index;
    object["Key"] = entry.key;
    object["Flags"] = entry.flags;
    object["Value"] = entry.value.empty() ? nlohmann::ordered_json(nullptr)
                                          : nlohmann::ordered_json(absl::Base64Escape(entry.value));
    if (!entry.session.empty()) object["Session"] = entry.session;
    object["CreateIndex"] = entry.create_index;
    object["ModifyIndex"] = entry.modify_index;
    body.push_back(std::move(object));
  }
  return body.dump();
}

// Keys the repository's key space would ignore (no "ns/" prefix) map to nullopt.
std::optional<std::string> StripNamespace(absl::string_view key) {
  if (!absl::StartsWith(key, "ns/")) return std::nullopt;
  return std::string(key.substr(2));
}

// Random listings over a small key set, so successive ones overlap: every key may be absent,
// unchanged, rewritten with the same value, or changed. Keys and values include characters
// JSON escapes; keys are valid UTF-8 (Consul's JSON always is).
class ListingGenerator {
 public:
  explicit ListingGenerator(uint32_t seed) : random_(seed) {}

  std::vector<consul::DirEntry> Next() {
    static const char* const kKeys[] = {"ns/a",
                                        "ns/a/1",
                                        "ns/a/2",
                                        "ns/a/q\"uote",
                                        "ns/a/back\\slash",
                                        "ns/a/\xC3\xA9t\xC3\xA9",
                                        "ns/a/line\nbreak",
                                        "ns/a/\xE2\x80\xA8",
                                        "ns/ab",
                                        "ns/a/z",
                                        "other/a/1",
                                        "ns/a/deep/x/y",
                                        "ns/a/<&>"};
    static const std::string kValues[] = {
        "", "v", "w", "\"q\"", std::string("\0\xFF", 2), "long value with spaces"};
    std::vector<consul::DirEntry> entries;
    for (const char* key : kKeys) {
      if (Roll(4) == 0) continue;  // absent this time
      consul::DirEntry& entry = state_[key];
      entry.key = key;
      if (entry.create_index == 0 || Roll(3) == 0) {  // written since the last listing
        entry.value = kValues[Roll(std::size(kValues))];
        entry.flags = Roll(3) == 0 ? 7 : 0;
        entry.modify_index = ++index_;
        if (entry.create_index == 0) entry.create_index = entry.modify_index;
      }
      entries.push_back(entry);
    }
    std::sort(entries.begin(), entries.end(),
              [](const consul::DirEntry& a, const consul::DirEntry& b) { return a.key < b.key; });
    return entries;
  }

  size_t Roll(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }

 private:
  std::mt19937 random_;
  std::map<std::string, consul::DirEntry> state_;
  uint64_t index_ = 0;
};

TEST(DiffListingBodyTest, GivesWhatDiffListingGivesOnRandomListings) {
  for (const char* scope_key : {"ns/a", "ns/", ""}) {
    const WatchScope scope(scope_key);
    ListingGenerator generator(/*seed=*/std::hash<std::string>()(scope_key) & 0xffff);
    Snapshot fast_view, reference_view;
    for (int round = 0; round < 300; ++round) {
      const std::vector<consul::DirEntry> listing = generator.Next();
      const CompareBy compare =
          generator.Roll(5) == 0 ? CompareBy::kContent : CompareBy::kModifyIndex;
      std::optional<DiffResult> fast =
          DiffListingBody(&fast_view, Body(listing), scope, StripNamespace, compare);
      DiffResult reference =
          DiffListing(std::move(reference_view), listing, scope, StripNamespace, compare);
      ASSERT_TRUE(fast.has_value()) << "round " << round << ": " << Body(listing);
      ASSERT_EQ(fast->events, reference.events) << "scope '" << scope_key << "' round " << round;
      ASSERT_EQ(fast->next, reference.next) << "scope '" << scope_key << "' round " << round;
      fast_view = std::move(fast->next);
      reference_view = std::move(reference.next);
    }
  }
}

TEST(DiffListingBodyTest, UnchangedListingGivesNoEventsAndKeepsTheNewestIndexes) {
  const WatchScope scope("ns/a");
  consul::DirEntry entry;
  entry.key = "ns/a/k";
  entry.value = "v";
  entry.create_index = entry.modify_index = 3;
  Snapshot view = DiffListing({}, {entry}, scope, StripNamespace, CompareBy::kModifyIndex).next;
  entry.modify_index = 9;  // rewritten with the same value, seen after an index reset
  std::optional<DiffResult> diff =
      DiffListingBody(&view, Body({entry}), scope, StripNamespace, CompareBy::kContent);
  ASSERT_TRUE(diff.has_value());
  EXPECT_TRUE(diff->events.empty());
  ASSERT_EQ(diff->next.size(), 1u);
  EXPECT_EQ(diff->next[0].modify_index, 9u);
  EXPECT_EQ(diff->next[0].key, "/a/k");
}

// As DiffListingTest.ByIndexAKeyWhoseIndexWentBackMakesTheListingComparedByContent.
TEST(DiffListingBodyTest, ByIndexAKeyWhoseIndexWentBackMakesTheListingComparedByContent) {
  const WatchScope scope("ns/a");
  consul::DirEntry a;
  a.key = "ns/a/a";
  a.value = "x";
  a.create_index = a.modify_index = 10;
  consul::DirEntry b = a;
  b.key = "ns/a/b";
  b.value = "y";
  b.create_index = b.modify_index = 12;
  Snapshot view = DiffListing({}, {a, b}, scope, StripNamespace, CompareBy::kModifyIndex).next;
  a.modify_index = 5;
  b.value = "z";
  std::optional<DiffResult> diff =
      DiffListingBody(&view, Body({a, b}), scope, StripNamespace, CompareBy::kModifyIndex);
  ASSERT_TRUE(diff.has_value());
  ASSERT_EQ(diff->events.size(), 1u);
  EXPECT_EQ(diff->events[0].type, DataChangedEvent::Type::kUpdated);
  EXPECT_EQ(diff->events[0].key, "/a/b");
  EXPECT_EQ(diff->events[0].value, "z");
}

TEST(DiffListingBodyTest, RefusedBodiesLeaveTheViewUntouched) {
  const WatchScope scope("ns/a");
  ListingGenerator generator(7);
  const std::vector<consul::DirEntry> listing = generator.Next();
  const Snapshot view =
      DiffListing({}, listing, scope, StripNamespace, CompareBy::kModifyIndex).next;
  ASSERT_FALSE(view.empty());
  const std::string a = R"({"Key":"ns/a/1","Value":"eA==","CreateIndex":1,"ModifyIndex":50})";
  const std::string b = R"({"Key":"ns/a/2","Value":"eA==","CreateIndex":1,"ModifyIndex":51})";
  const std::string bad_value =
      R"({"Key":"ns/a/3","Value":"not base64!","CreateIndex":1,"ModifyIndex":52})";
  for (const std::string& body : {
           absl::StrCat("[", b, ",", a, "]"),          // keys out of order
           absl::StrCat("[", a, ",", a, "]"),          // a key twice
           absl::StrCat("[", a, ",", bad_value, "]"),  // a value that is not base64
           absl::StrCat("[", a, ",", b),               // cut short
           std::string("{}"),
       }) {
    Snapshot copy = view;
    EXPECT_FALSE(
        DiffListingBody(&copy, body, scope, StripNamespace, CompareBy::kModifyIndex).has_value())
        << body;
    EXPECT_EQ(copy, view) << body;
  }
}

// Found by tests/fuzz/listing_differ_fuzzer: the general parser refuses this body (a key that
// is not UTF-8), so the in-place differ must not report events for it, even though the bad key
// is outside the scope.
TEST(DiffListingBodyTest, KeyThatIsNotUtf8IsLeftToTheGeneralParser) {
  const std::string body =
      "[{\"Value\":null,\"Flags\":1,\"LockIndex\":1,\"CreateIndex\":1,\"ModifyIndex\":1,"
      "\"Key\":\"ns/a\"},{\"Value\":null,\"Flags\":1,\"LockIndex\":1,\"CreateIndex\":1,"
      "\"ModifyIndex\":1,\"Key\":\"ns/\xff\"}]";
  Snapshot view;
  EXPECT_FALSE(
      DiffListingBody(&view, body, WatchScope("ns/a/"), nullptr, CompareBy::kContent).has_value());
  EXPECT_TRUE(view.empty());
}

// Found by tests/fuzz/listing_differ_fuzzer: "06" is not a JSON number, so the general parser
// refuses the body, and the in-place differ must not report an ADDED for it.
TEST(DiffListingBodyTest, IndexWithALeadingZeroIsLeftToTheGeneralParser) {
  Snapshot view;
  EXPECT_FALSE(DiffListingBody(&view, R"([{"Key":"ns/a/k","CreateIndex":1,"ModifyIndex":06}])",
                               WatchScope("ns/a/"), nullptr, CompareBy::kModifyIndex)
                   .has_value());
  EXPECT_TRUE(view.empty());
}

}  // namespace
}  // namespace registry::watch
