// SPDX-License-Identifier: Apache-2.0
#include "watch/split_plan.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::watch {
namespace {

using ::testing::ElementsAre;
using Kind = Probe::Kind;

// A listing (sorted keys, ModifyIndex = position + 1) and views into it.
class Listing {
 public:
  explicit Listing(std::vector<std::string> keys) : keys_(std::move(keys)) {
    std::sort(keys_.begin(), keys_.end());
    for (size_t i = 0; i < keys_.size(); ++i) views_.push_back(ListedKey{keys_[i], i + 1});
  }
  const std::vector<ListedKey>& views() const { return views_; }

 private:
  std::vector<std::string> keys_;
  std::vector<ListedKey> views_;
};

// "<root>f-000/k-000" .. : `folders` folders of `keys` keys.
std::vector<std::string> Tree(const std::string& root, int folders, int keys) {
  std::vector<std::string> out;
  for (int f = 0; f < folders; ++f) {
    for (int k = 0; k < keys; ++k) out.push_back(absl::StrFormat("%sf-%03d/k-%03d", root, f, k));
  }
  return out;
}

int ProbesReading(const SplitPlan& plan, const std::string& key) {
  int readers = 0;
  for (const Probe& probe : plan.probes) {
    if (probe.kind == Kind::kTree && absl::StartsWith(key, probe.prefix)) ++readers;
    if (probe.kind == Kind::kKey && key == probe.prefix) ++readers;
  }
  return readers;
}

int Count(const SplitPlan& plan, Kind kind) {
  return std::count_if(plan.probes.begin(), plan.probes.end(),
                       [kind](const Probe& p) { return p.kind == kind; });
}

// Every key of the scope is read by exactly one probe, and the budget holds.
void ExpectSoundPlan(const SplitPlan& plan, const WatchScope& scope, const Listing& listing,
                     int max_queries) {
  EXPECT_LE(plan.probes.size(), static_cast<size_t>(max_queries));
  for (const ListedKey& listed : listing.views()) {
    if (!scope.Contains(listed.key)) continue;
    EXPECT_EQ(ProbesReading(plan, std::string(listed.key)), 1) << listed.key;
    EXPECT_TRUE(plan.Covers(scope, listed.key)) << listed.key;
  }
}

TEST(SplitPlanTest, ListingWithinTheThresholdOrTinyBudgetStaysOneQuery) {
  Listing listing(Tree("ns/t/", 10, 10));
  WatchScope scope("ns/t");
  EXPECT_EQ(PlanSplit(scope, listing.views(), {.threshold = 100, .max_queries = 32}), std::nullopt);
  EXPECT_EQ(PlanSplit(scope, listing.views(), {.threshold = 99, .max_queries = 2}), std::nullopt);
  EXPECT_NE(PlanSplit(scope, listing.views(), {.threshold = 99, .max_queries = 32}), std::nullopt);
}

// Consul lists keys in ascending order; a listing out of order would make a plan whose groups
// miss keys, so it stays one query.
TEST(SplitPlanTest, ListingOutOfOrderStaysOneQuery) {
  Listing listing(Tree("ns/t/", 10, 10));
  std::vector<ListedKey> shuffled = listing.views();
  std::swap(shuffled[5], shuffled[50]);
  WatchScope scope("ns/t");
  EXPECT_EQ(PlanSplit(scope, shuffled, {.threshold = 99, .max_queries = 32}), std::nullopt);
}

TEST(SplitPlanTest, HundredFoldersWithRoomForAllGetOneQueryEach) {
  Listing listing(Tree("ns/t/", 100, 100));
  WatchScope scope("ns/t/");
  std::optional<SplitPlan> plan = PlanSplit(scope, listing.views(), {1024, 128});
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->probes.size(), 101u);
  EXPECT_EQ(plan->probes[0], (Probe{Kind::kGuard, "ns/t/", 10000}));
  // A group of one folder is read by the prefix that set it apart from its siblings.
  EXPECT_EQ(plan->probes[1], (Probe{Kind::kTree, "ns/t/f-000", 100}));
  EXPECT_EQ(plan->probes[100], (Probe{Kind::kTree, "ns/t/f-099", 10000}));
  ExpectSoundPlan(*plan, scope, listing, 128);
}

TEST(SplitPlanTest, TightBudgetGroupsFoldersByPrefixAndSplitsTheLargestFirst) {
  Listing listing(Tree("ns/t/", 100, 100));
  WatchScope scope("ns/t/");
  std::optional<SplitPlan> plan = PlanSplit(scope, listing.views(), {1024, 32});
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(Count(*plan, Kind::kGuard), 1);
  // f-00..f-09 (10 groups of 10 folders), then groups of 10 become 10 folders while they fit.
  EXPECT_EQ(plan->probes.size(), 29u);
  EXPECT_EQ(plan->probes[1].prefix, "ns/t/f-000");
  EXPECT_EQ(plan->probes.back().prefix, "ns/t/f-09");
  ExpectSoundPlan(*plan, scope, listing, 32);
}

TEST(SplitPlanTest, ChainOfSingleFoldersGetsAGuardEachAndSplitsWhereTheTreeFansOut) {
  Listing listing(Tree("ns/metadata/db/schemas/s/tables/", 40, 30));
  WatchScope scope("ns/metadata");
  std::optional<SplitPlan> plan = PlanSplit(scope, listing.views(), {1024, 64});
  ASSERT_TRUE(plan.has_value());
  std::vector<std::string> guards;
  for (const Probe& probe : plan->probes) {
    if (probe.kind == Kind::kGuard) guards.push_back(probe.prefix);
  }
  EXPECT_THAT(guards, ElementsAre("ns/metadata/", "ns/metadata/db/", "ns/metadata/db/schemas/",
                                  "ns/metadata/db/schemas/s/", "ns/metadata/db/schemas/s/tables/"));
  EXPECT_EQ(Count(*plan, Kind::kTree), 40);
  ExpectSoundPlan(*plan, scope, listing, 64);
}

TEST(SplitPlanTest, WatchedKeyItselfLeavesAndFolderMarkersAreKeyProbes) {
  std::vector<std::string> keys = Tree("ns/t/", 30, 40);
  keys.push_back("ns/t");         // the watched key itself
  keys.push_back("ns/t/");        // a folder marker: the split folder's own key
  keys.push_back("ns/t/f-000");   // a leaf named like a folder
  keys.push_back("ns/tx/other");  // outside the scope
  Listing listing(keys);
  WatchScope scope("ns/t");
  std::optional<SplitPlan> plan = PlanSplit(scope, listing.views(), {1024, 64});
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->probes[0].kind, Kind::kKey);
  EXPECT_EQ(plan->probes[0].prefix, "ns/t");
  EXPECT_EQ(plan->probes[1].kind, Kind::kGuard);
  EXPECT_EQ(plan->probes[1].prefix, "ns/t/");
  ExpectSoundPlan(*plan, scope, listing, 64);
  EXPECT_EQ(ProbesReading(*plan, "ns/tx/other"), 0);
}

TEST(SplitPlanTest, FlatPrefixStaysOneQuery) {
  // Its guard would answer with every key's name.
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(absl::StrFormat("ns/flat/k-%04d", i));
  Listing listing(keys);
  EXPECT_EQ(PlanSplit(WatchScope("ns/flat/"), listing.views(), {1024, 32}), std::nullopt);
  // Folders of two keys each are split.
  keys.clear();
  for (int i = 0; i < 5000; ++i)
    keys.push_back(absl::StrFormat("ns/flat/f-%04d/k-%d", i / 2, i % 2));
  Listing pairs(keys);
  EXPECT_NE(PlanSplit(WatchScope("ns/flat/"), pairs.views(), {1024, 32}), std::nullopt);
}

TEST(SplitPlanTest, CoversNamesOfThePlanAndNotNewOnes) {
  Listing listing(Tree("ns/t/", 20, 60));
  WatchScope scope("ns/t");
  std::optional<SplitPlan> plan = PlanSplit(scope, listing.views(), {1024, 64});
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->Covers(scope, "ns/t/"));         // the next guard's folder
  EXPECT_TRUE(plan->Covers(scope, "ns/t/f-007/"));   // a folder of the plan
  EXPECT_TRUE(plan->Covers(scope, "ns/tx/"));        // outside the scope
  EXPECT_TRUE(plan->Covers(scope, "ns/t"));          // the watched key, absent when planned
  EXPECT_FALSE(plan->Covers(scope, "ns/t/g-000/"));  // a new folder
  EXPECT_FALSE(plan->Covers(scope, "ns/t/leaf"));    // a new leaf
}

TEST(SplitPlanTest, SplitsBelowAFolderThatHoldsEverything) {
  Listing listing(Tree("ns/t/only/", 40, 50));
  // The watched key, guards on "ns/t/" and "ns/t/only/", then f-0.., f-1.., f-2.., f-3...
  std::optional<SplitPlan> plan = PlanSplit(WatchScope("ns/t"), listing.views(), {1024, 7});
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(Count(*plan, Kind::kGuard), 2);
  EXPECT_EQ(plan->probes.size(), 7u);
  // Without room for those four groups, no split.
  EXPECT_EQ(PlanSplit(WatchScope("ns/t"), listing.views(), {1024, 6}), std::nullopt);
}

}  // namespace
}  // namespace registry::watch
