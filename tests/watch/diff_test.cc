// SPDX-License-Identifier: Apache-2.0
// DiffListing: previous view + fresh listing -> the events that bring the listener to it.
#include "watch/diff.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::watch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Type = DataChangedEvent::Type;

consul::DirEntry Entry(std::string key, std::string value, uint64_t modify_index,
                       uint64_t flags = 0) {
  consul::DirEntry entry;
  entry.key = std::move(key);
  entry.value = std::move(value);
  entry.modify_index = modify_index;
  entry.create_index = modify_index;
  entry.flags = flags;
  return entry;
}

DataChangedEvent Event(Type type, std::string key, std::string value, uint64_t flags = 0) {
  DataChangedEvent event;
  event.type = type;
  event.key = std::move(key);
  event.value = std::move(value);
  event.flags = flags;
  return event;
}

// Strips "ns" like a repository's key space would.
std::optional<std::string> StripNamespace(absl::string_view key) {
  if (!absl::StartsWith(key, "ns/")) return std::nullopt;
  return std::string(key.substr(2));
}

Snapshot View(std::vector<consul::DirEntry> listing, const WatchScope& scope) {
  return DiffListing({}, std::move(listing), scope, StripNamespace, CompareBy::kModifyIndex).next;
}

TEST(WatchScopeTest, CoversTheKeyAndItsSubtreeButNotSiblingsSharingThePrefix) {
  WatchScope scope("ns/a");
  EXPECT_TRUE(scope.Contains("ns/a"));
  EXPECT_TRUE(scope.Contains("ns/a/b"));
  EXPECT_TRUE(scope.Contains("ns/a/b/c"));
  EXPECT_FALSE(scope.Contains("ns/ab"));
  EXPECT_FALSE(scope.Contains("ns/ab/c"));
  EXPECT_FALSE(scope.Contains("ns"));
}

TEST(WatchScopeTest, KeyEndingWithSlashIsAPurePrefix) {
  WatchScope scope("ns/");
  EXPECT_TRUE(scope.Contains("ns/"));
  EXPECT_TRUE(scope.Contains("ns/x"));
  EXPECT_FALSE(scope.Contains("ns"));
  EXPECT_FALSE(scope.Contains("nsx/y"));
  EXPECT_TRUE(WatchScope("").Contains("anything"));
}

TEST(DiffListingTest, NewKeysAreAddedWithTheirMappedKeyAndValue) {
  WatchScope scope("ns/a");
  DiffResult result = DiffListing({}, {Entry("ns/a", "root", 5), Entry("ns/a/b", "x", 6, 3)}, scope,
                                  StripNamespace, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events,
              ElementsAre(Event(Type::kAdded, "/a", "root"), Event(Type::kAdded, "/a/b", "x", 3)));
  ASSERT_EQ(result.next.size(), 2u);
  EXPECT_EQ(result.next[1].consul_key, "ns/a/b");
  EXPECT_EQ(result.next[1].key, "/a/b");
  EXPECT_EQ(result.next[1].modify_index, 6u);
}

TEST(DiffListingTest, ModifyIndexChangeWithTheSameValueIsAnUpdate) {
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a/k", "v", 5)}, scope);
  DiffResult result = DiffListing(before, {Entry("ns/a/k", "v", 9)}, scope, StripNamespace,
                                  CompareBy::kModifyIndex);
  EXPECT_THAT(result.events, ElementsAre(Event(Type::kUpdated, "/a/k", "v")));
  EXPECT_EQ(result.next[0].modify_index, 9u);
}

TEST(DiffListingTest, UnchangedKeysProduceNoEvent) {
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a/k", "v", 5), Entry("ns/a/l", "w", 6)}, scope);
  DiffResult result = DiffListing(before, {Entry("ns/a/k", "v", 5), Entry("ns/a/l", "w", 6)}, scope,
                                  StripNamespace, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events, IsEmpty());
  EXPECT_EQ(result.next, before);
}

TEST(DiffListingTest, MissingKeysAreDeletedWithTheirLastKnownValueAndFlags) {
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a/gone", "last", 5, 2), Entry("ns/a/kept", "v", 6)}, scope);
  DiffResult result = DiffListing(before, {Entry("ns/a/kept", "v", 6)}, scope, StripNamespace,
                                  CompareBy::kModifyIndex);
  EXPECT_THAT(result.events, ElementsAre(Event(Type::kDeleted, "/a/gone", "last", 2)));
  ASSERT_EQ(result.next.size(), 1u);
  EXPECT_EQ(result.next[0].consul_key, "ns/a/kept");
}

TEST(DiffListingTest, EmptyListingDeletesEverything) {
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a", "1", 5), Entry("ns/a/x/y", "2", 6)}, scope);
  DiffResult result = DiffListing(before, {}, scope, StripNamespace, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events,
              ElementsAre(Event(Type::kDeleted, "/a", "1"), Event(Type::kDeleted, "/a/x/y", "2")));
  EXPECT_THAT(result.next, IsEmpty());
}

TEST(DiffListingTest, KeysOutsideTheScopeAreIgnored) {
  WatchScope scope("ns/a");
  DiffResult result = DiffListing(
      {}, {Entry("ns/a/x", "in", 5), Entry("ns/ab", "out", 6), Entry("ns/ab/c", "out", 7)}, scope,
      StripNamespace, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events, ElementsAre(Event(Type::kAdded, "/a/x", "in")));
}

TEST(DiffListingTest, KeysTheMapperRejectsAreIgnored) {
  WatchScope scope("");
  DiffResult result = DiffListing({}, {Entry("ns/x", "in", 5), Entry("other/y", "out", 6)}, scope,
                                  StripNamespace, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events, ElementsAre(Event(Type::kAdded, "/x", "in")));
  EXPECT_EQ(result.next.size(), 1u);
}

TEST(DiffListingTest, NullMapperKeepsConsulKeys) {
  WatchScope scope("ns/a");
  DiffResult result =
      DiffListing({}, {Entry("ns/a/x", "v", 5)}, scope, nullptr, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events, ElementsAre(Event(Type::kAdded, "ns/a/x", "v")));
}

TEST(DiffListingTest, ContentComparisonIgnoresIndexesAfterAReset) {
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a/same", "v", 50), Entry("ns/a/changed", "old", 51),
                          Entry("ns/a/flagged", "f", 52)},
                         scope);
  // After an index reset every ModifyIndex is 1: only real content changes are reported.
  DiffResult result = DiffListing(before,
                                  {Entry("ns/a/same", "v", 1), Entry("ns/a/changed", "new", 1),
                                   Entry("ns/a/flagged", "f", 1, 4)},
                                  scope, StripNamespace, CompareBy::kContent);
  EXPECT_THAT(result.events, ElementsAre(Event(Type::kUpdated, "/a/changed", "new"),
                                         Event(Type::kUpdated, "/a/flagged", "f", 4)));
  for (const KnownEntry& entry : result.next) EXPECT_EQ(entry.modify_index, 1u) << entry.key;
}

TEST(DiffListingTest, ByIndexAnEqualModifyIndexMeansUnchanged) {
  // Consul bumps ModifyIndex on every change of a key, so by index the content is not looked at
  // (that is what spares a big listing the decoding of every value). Content differing under an
  // equal index only happens across server histories, which the engine compares by content.
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a/k", "old", 7)}, scope);
  DiffResult by_index = DiffListing(before, {Entry("ns/a/k", "new", 7)}, scope, StripNamespace,
                                    CompareBy::kModifyIndex);
  EXPECT_THAT(by_index.events, IsEmpty());
  DiffResult by_content =
      DiffListing(before, {Entry("ns/a/k", "new", 7)}, scope, StripNamespace, CompareBy::kContent);
  EXPECT_THAT(by_content.events, ElementsAre(Event(Type::kUpdated, "/a/k", "new")));
}

// The store's indexes were reset (a snapshot restored) and no blocking query saw the index go
// back: "a" now carries a lower index, "b" was rewritten since and happens to carry its old
// index with a new value. By index "b" would look unchanged; the lower index of "a" shows the
// listing spans two histories, so it is compared by content.
TEST(DiffListingTest, ByIndexAKeyWhoseIndexWentBackMakesTheListingComparedByContent) {
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a/a", "x", 10), Entry("ns/a/b", "y", 12)}, scope);
  DiffResult result = DiffListing(before, {Entry("ns/a/a", "x", 5), Entry("ns/a/b", "z", 12)},
                                  scope, StripNamespace, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events, ElementsAre(Event(Type::kUpdated, "/a/b", "z")));
}

TEST(DiffListingTest, UnsortedListingGivesEventsInKeyOrder) {
  WatchScope scope("ns/a");
  Snapshot before = View({Entry("ns/a/b", "1", 5)}, scope);
  DiffResult result = DiffListing(before, {Entry("ns/a/c", "3", 8), Entry("ns/a/a", "2", 7)}, scope,
                                  StripNamespace, CompareBy::kModifyIndex);
  EXPECT_THAT(result.events,
              ElementsAre(Event(Type::kAdded, "/a/a", "2"), Event(Type::kDeleted, "/a/b", "1"),
                          Event(Type::kAdded, "/a/c", "3")));
  ASSERT_EQ(result.next.size(), 2u);
  EXPECT_EQ(result.next[0].consul_key, "ns/a/a");
  EXPECT_EQ(result.next[1].consul_key, "ns/a/c");
}

TEST(DiffListingTest, ApplyingTheEventsToTheOldViewGivesTheNewView) {
  WatchScope scope("ns/a");
  Snapshot before =
      View({Entry("ns/a/1", "a", 3), Entry("ns/a/2", "b", 4), Entry("ns/a/3", "c", 5)}, scope);
  std::map<std::string, std::string> mirror;
  for (const KnownEntry& entry : before) mirror[entry.key] = entry.value;
  DiffResult result = DiffListing(
      before, {Entry("ns/a/2", "b2", 9), Entry("ns/a/3", "c", 5), Entry("ns/a/4", "d", 10)}, scope,
      StripNamespace, CompareBy::kModifyIndex);
  for (const DataChangedEvent& event : result.events) {
    if (event.type == Type::kDeleted) {
      mirror.erase(event.key);
    } else {
      mirror[event.key] = *event.value;
    }
  }
  std::map<std::string, std::string> expected = {{"/a/2", "b2"}, {"/a/3", "c"}, {"/a/4", "d"}};
  EXPECT_EQ(mirror, expected);
}

TEST(ReplayEventsTest, ReportsEveryEntryAsAddedInOrder) {
  WatchScope scope("ns/a");
  Snapshot view = View({Entry("ns/a/x", "1", 3), Entry("ns/a/y", "2", 4)}, scope);
  EXPECT_THAT(ReplayEvents(view),
              ElementsAre(Event(Type::kAdded, "/a/x", "1"), Event(Type::kAdded, "/a/y", "2")));
}

}  // namespace
}  // namespace registry::watch
