// SPDX-License-Identifier: Apache-2.0
// The query machine (watch/query_machine.h) of split watches, driven input by input with no
// server and no clock: what each kind of probe does with each answer, when a split ends, and
// when a watch plans (again).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/watch/query_machine_testing.h"
#include "watch/query_machine.h"

namespace registry::watch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Phase = QueryState::Phase;

// The probes of the tree below, split into at most 4 queries.
constexpr QueryIndex kRootKey = 0;  // the watched key "ns/t" itself (absent)
constexpr QueryIndex kGuard = 1;    // the names below "ns/t/"
constexpr QueryIndex kGroupA = 2;   // "ns/t/a*": folders a0 and a1
constexpr QueryIndex kGroupB = 3;   // "ns/t/b*": folders b0 and b1
const absl::Duration kEarly = absl::Seconds(1);

// "ns/t/<folder>/k<i>" = "0" for folders a0, a1, b0, b1 and i = 0, 1; ModifyIndex 10..17.
std::vector<Kv> Tree() {
  std::vector<Kv> tree;
  uint64_t index = 10;
  for (const char* folder : {"a0", "a1", "b0", "b1"}) {
    for (int i = 0; i < 2; ++i)
      tree.push_back({absl::StrCat("ns/t/", folder, "/k", i), "0", index++});
  }
  return tree;
}

// Group a's part of Tree(), with `changes` applied.
std::vector<Kv> PartA(std::vector<Kv> changes = {}) {
  const std::vector<Kv> tree = Tree();
  std::vector<Kv> part(tree.begin(), tree.begin() + 4);
  for (const Kv& change : changes) {
    for (Kv& kv : part) {
      if (kv.key == change.key) kv = change;
    }
  }
  return part;
}

std::vector<std::string> Folders() { return {"ns/t/a0/", "ns/t/a1/", "ns/t/b0/", "ns/t/b1/"}; }

class SplitWatchTest : public ::testing::Test {
 protected:
  // Started at kT0 from Tree() at index 20: every probe's query is in flight.
  SplitWatchTest() : state_(StartedTreeWatch(rules_, "ns/t", 20, Tree())) {}

  std::vector<std::string> Answer(QueryIndex query, const Reply& reply, absl::Time at) {
    return Step(rules_, &state_, reply.To(query, at));
  }
  bool Split() const { return std::get<TreeWatch>(state_.role).split.has_value(); }
  const Snapshot& View() const { return std::get<TreeWatch>(state_.role).snapshot; }

  const QueryRules rules_ = TestRules(/*split_threshold=*/4, /*max_queries=*/4);
  WatchState state_;
};

// Rule 8.
TEST_F(SplitWatchTest, ABigTreeSplitsIntoProbesThatStartAtTheIndexOfTheirKeys) {
  std::vector<DataChangedEvent> replay;
  WatchState state = NewTreeWatch(rules_, WatchScope("ns/t"), KvListing(20, Tree()), &replay);
  EXPECT_EQ(replay.size(), 8u);
  EXPECT_THAT(Step(rules_, &state, Started{kT0}),
              ElementsAre("log debug", "open 4 probes", "send probe 0 get ns/t @0",
                          "send probe 1 names ns/t/ @17", "send probe 2 list ns/t/a @13",
                          "send probe 3 list ns/t/b @17"));
  EXPECT_EQ(state.own.phase, Phase::kIdle) << "the own query idles while split";
}

TEST_F(SplitWatchTest, AProbeDeliversTheChangesOfItsPartAndBlocksOnItsOwnIndex) {
  EXPECT_THAT(Answer(kGroupA, Listing(21, PartA({{"ns/t/a0/k0", "1", 21}})), kT0 + kEarly),
              ElementsAre("deliver UPDATED ns/t/a0/k0=1", "send probe 2 list ns/t/a @21"));
  EXPECT_EQ(View().size(), 8u);
  EXPECT_EQ(QueryOf(state_, kGroupB).sent_index, 17u) << "the other parts wait on";
}

TEST_F(SplitWatchTest, AnAbsentWatchedKeyIsNormalForItsKeyProbe) {
  // Its first query was a plain read (no key, no index): it answers at once, with the index.
  EXPECT_THAT(Answer(kRootKey, NothingThere(20), kT0), ElementsAre("send probe 0 get ns/t @20"));
  EXPECT_THAT(Answer(kRootKey, KeyAnswer(22, {"ns/t", "root", 22}), kT0 + kEarly),
              ElementsAre("deliver ADDED ns/t=root", "send probe 0 get ns/t @22"));
}

// Rule 10.
TEST_F(SplitWatchTest, AGuardThatAnsweredAChangePausesAndMayThenOpenANewConnection) {
  const absl::Time answered = kT0 + kEarly;
  EXPECT_THAT(Answer(kGuard, Names(22, Folders()), answered), ElementsAre("wait probe 1 +1.05s"));
  EXPECT_EQ(QueryOf(state_, kGuard).phase, Phase::kWaiting);
  EXPECT_TRUE(MayOpenConnection(state_, kGuard)) << "its idle connection may be taken meanwhile";
  EXPECT_THAT(Step(rules_, &state_, TimerFired{answered + kGuardPause, answered + kGuardPause}),
              ElementsAre("send probe 1 names ns/t/ @22"));
  // After the whole wait with nothing new it asks again at once, on the connection it holds.
  EXPECT_THAT(Answer(kGuard, Names(22, Folders()), answered + kGuardPause + kWait),
              ElementsAre("send probe 1 names ns/t/ @22"));
  EXPECT_FALSE(MayOpenConnection(state_, kGuard));
}

TEST_F(SplitWatchTest, WithoutAPauseAGuardAsksAgainAtOnce) {
  QueryRules rules = rules_;
  rules.split_guard_pause = absl::ZeroDuration();
  EXPECT_THAT(Step(rules, &state_, Names(22, Folders()).To(kGuard, kT0 + kEarly)),
              ElementsAre("send probe 1 names ns/t/ @22"));
}

// Rule 9: a re-list for a new plan, diffed by index, and planned whatever its index.
TEST_F(SplitWatchTest, ANameNoProbeCoversMakesTheWatchReListAndPlanAgain) {
  std::vector<std::string> names = Folders();
  names.push_back("ns/t/c/");
  EXPECT_THAT(Answer(kGuard, Names(22, names), kT0 + kEarly),
              ElementsAre("close probes", "send own list ns/t @0"));
  EXPECT_FALSE(Split());
  EXPECT_EQ(state_.next, NextRead::kReplan);
  // Even with the index it started from (the name came and went), the watch plans again.
  EXPECT_THAT(Answer(kOwnQuery, Listing(20, Tree()), kT0 + kEarly),
              ElementsAre("log debug", "open 4 probes", "send probe 0 get ns/t @0",
                          "send probe 1 names ns/t/ @17", "send probe 2 list ns/t/a @13",
                          "send probe 3 list ns/t/b @17"));
  EXPECT_EQ(state_.next, NextRead::kBlocking);
}

TEST_F(SplitWatchTest, AReListForANewPlanIsDiffedByIndex) {
  Answer(kGuard, NothingThere(22), kT0 + kEarly);  // the folder is gone: plan again
  std::vector<Kv> tree = Tree();
  tree[0].value = "same index, new value";  // not reported: within one history, the index rules
  for (int i = 2; i >= 0; --i) {            // a new folder a2, after a1 (a listing is sorted)
    tree.insert(tree.begin() + 4, {absl::StrCat("ns/t/a2/k", i), "new", 22});
  }
  std::vector<std::string> actions = Answer(kOwnQuery, Listing(22, tree), kT0 + kEarly);
  ASSERT_FALSE(actions.empty());
  EXPECT_EQ(actions[0], "deliver ADDED ns/t/a2/k0=new, ADDED ns/t/a2/k1=new, ADDED ns/t/a2/k2=new");
  EXPECT_TRUE(Split());
}

TEST_F(SplitWatchTest, AFolderGoneMakesTheWatchReListAndPlanAgain) {
  EXPECT_THAT(Answer(kGuard, NothingThere(22), kT0 + kEarly),
              ElementsAre("close probes", "send own list ns/t @0"));
  EXPECT_EQ(state_.next, NextRead::kReplan);
}

TEST_F(SplitWatchTest, AnEmptiedPartIsDeliveredThenTheWatchReListsAndPlansAgain) {
  EXPECT_THAT(Answer(kGroupB, NothingThere(23), kT0 + kEarly),
              ElementsAre("deliver DELETED ns/t/b0/k0=0, DELETED ns/t/b0/k1=0, "
                          "DELETED ns/t/b1/k0=0, DELETED ns/t/b1/k1=0",
                          "close probes", "send own list ns/t @0"));
  EXPECT_EQ(View().size(), 4u);
}

// Rule 9: any trouble of a probe ends the split; the watch backs off and re-lists as one.
TEST_F(SplitWatchTest, AProbesFailureEndsTheSplitAndTheWatchReListsThenPlansAgain) {
  const absl::Time failed = kT0 + kEarly;
  EXPECT_THAT(Answer(kGroupA, HttpError(500, "No cluster leader"), failed),
              ElementsAre("avoid server", "log warn", "close probes", "wait own +2s"));
  EXPECT_FALSE(Split());
  EXPECT_THAT(Step(rules_, &state_, TimerFired{failed + kBackoffUnit, failed + kBackoffUnit}),
              ElementsAre("send own list ns/t @0"));
  EXPECT_THAT(Answer(kOwnQuery, Listing(24, Tree()), failed + kBackoffUnit),
              ElementsAre("count relist", "log info", "log debug", "open 4 probes",
                          "send probe 0 get ns/t @0", "send probe 1 names ns/t/ @17",
                          "send probe 2 list ns/t/a @13", "send probe 3 list ns/t/b @17"));
}

TEST_F(SplitWatchTest, AProbesIndexResetEndsTheSplitAndBacksOff) {
  EXPECT_THAT(Answer(kGroupA, Listing(5, PartA()), kT0 + kWait),
              ElementsAre("close probes", "wait own +1m1s"));
  EXPECT_TRUE(state_.backoff_suspicious);
  EXPECT_EQ(state_.next, NextRead::kRelist);
}

TEST_F(SplitWatchTest, AProbesEarlyUnchangedIndexEndsTheSplitAndBacksOff) {
  EXPECT_THAT(Answer(kGroupA, Listing(13, PartA()), kT0 + kEarly),
              ElementsAre("close probes", "wait own +2s"));
  EXPECT_TRUE(state_.backoff_suspicious);
}

// Rule 3, for a part.
TEST_F(SplitWatchTest, AProbesUnchangedIndexAfterTheWholeWaitIsComparedByContent) {
  EXPECT_THAT(Answer(kGroupA, Listing(13, PartA({{"ns/t/a1/k1", "lost", 13}})), kT0 + kWait),
              ElementsAre("deliver UPDATED ns/t/a1/k1=lost", "send probe 2 list ns/t/a @13"));
  EXPECT_TRUE(Split());
}

TEST_F(SplitWatchTest, AProbesMalformedAnswerEndsTheSplitAsAFailure) {
  EXPECT_THAT(Answer(kGroupB, Malformed(30), kT0 + kEarly),
              ElementsAre("avoid server", "log warn", "close probes", "wait own +2s"));
  EXPECT_EQ(View().size(), 8u) << "a failed diff leaves the view as it was";
}

// Rule 10.
TEST_F(SplitWatchTest, AProperProbeAnswerEndsTheWatchsRunOfBackOffs) {
  state_.backoffs = 3;
  Answer(kRootKey, NothingThere(20), kT0);  // a plain read: no proof the server blocks again
  EXPECT_EQ(state_.backoffs, 3);
  Answer(kGroupA, Listing(21, PartA({{"ns/t/a0/k0", "1", 21}})), kT0 + kEarly);
  EXPECT_EQ(state_.backoffs, 0);
}

TEST_F(SplitWatchTest, TheAnswerOfAProbeOfAnEndedSplitIsIgnored) {
  Answer(kGroupA, TransportError(), kT0 + kEarly);
  EXPECT_THAT(Answer(kGroupB, Listing(30, {}), kT0 + kEarly), IsEmpty());
  EXPECT_EQ(View().size(), 8u);
}

TEST_F(SplitWatchTest, ARefusedConnectionOfAProbeReListsAtOnce) {
  EXPECT_THAT(Step(rules_, &state_, ConnectionRefused{kT0 + kEarly}),
              ElementsAre("close probes", "send own list ns/t @0"));
  EXPECT_EQ(state_.next, NextRead::kRelist);
  EXPECT_EQ(state_.backoffs, 0);
}

TEST_F(SplitWatchTest, AProbeThatCannotStartEndsTheSplitAsAFailure) {
  EXPECT_THAT(Step(rules_, &state_, NotSent{absl::ResourceExhaustedError("no handle"), kT0}),
              ElementsAre("log warn", "close probes", "wait own +1s"));
}

TEST_F(SplitWatchTest, WithoutTransfersForItsProbesTheWatchStaysOneQuery) {
  std::vector<DataChangedEvent> replay;
  WatchState state = NewTreeWatch(rules_, WatchScope("ns/t"), KvListing(20, Tree()), &replay);
  Transition(rules_, &state, Started{kT0});
  EXPECT_THAT(Step(rules_, &state, ProbesRefused{kT0}),
              ElementsAre("close probes", "send own list ns/t @20"));
  EXPECT_EQ(state.own.phase, Phase::kSent);
}

// Rule 8: a tree PlanSplit declined is planned again once it grew by a quarter, or re-listed.
class DeclinedPlanTest : public ::testing::Test {
 protected:
  // `folders` folders "ns/f/d<i>/" of `per_folder` keys, then `flat` keys "ns/f/k<i>" (a prefix
  // of mostly single keys is not worth splitting: its guard would answer with every key).
  static std::vector<Kv> Keys(int flat, int folders, int per_folder = 2) {
    std::vector<Kv> keys;
    for (int i = 0; i < folders; ++i) {
      for (int k = 0; k < per_folder; ++k) {
        keys.push_back({absl::StrCat("ns/f/d", i, "/k", k), "0", 30});
      }
    }
    for (int i = 0; i < flat; ++i) keys.push_back({absl::StrCat("ns/f/k", i), "0", 30});
    return keys;
  }
  size_t DeclinedAt() const { return std::get<TreeWatch>(state_.role).declined_at; }
  std::vector<std::string> Answer(const Reply& reply, absl::Time at) {
    std::vector<std::string> actions = Step(rules_, &state_, reply.To(kOwnQuery, at));
    if (!actions.empty() && actions.front().starts_with("deliver")) actions.erase(actions.begin());
    return actions;
  }

  const QueryRules rules_ = TestRules(/*split_threshold=*/4, /*max_queries=*/8);
  WatchState state_ = StartedTreeWatch(rules_, "ns/f", 30, Keys(8, 0));
};

TEST_F(DeclinedPlanTest, IsPlannedAgainOnceItGrewByAQuarter) {
  EXPECT_EQ(DeclinedAt(), 8u);
  // 8 flat keys and 2 folders now: 12 keys, worth planning again (more than 8 + 8 / 4)...
  EXPECT_THAT(Answer(Listing(31, Keys(8, 2)), kT0 + kEarly), ElementsAre("send own list ns/f @31"));
  EXPECT_EQ(DeclinedAt(), 12u) << "...and declined: mostly single keys still";
  // 10 flat keys and 2 folders: 14 keys, not a quarter more than 12: not planned.
  EXPECT_THAT(Answer(Listing(32, Keys(10, 2)), kT0 + kEarly),
              ElementsAre("send own list ns/f @32"));
  EXPECT_EQ(DeclinedAt(), 12u);
  // 4 folders of 4 keys and 2 flat keys: 18 keys, half again as many: planned, and split.
  std::vector<std::string> actions = Answer(Listing(33, Keys(2, 4, 4)), kT0 + kEarly);
  ASSERT_FALSE(actions.empty());
  EXPECT_EQ(actions[0], "log debug");
  EXPECT_EQ(DeclinedAt(), 0u);
}

TEST_F(DeclinedPlanTest, IsPlannedAgainAfterAReList) {
  // 2 folders of 4 keys and a flat one: 9 keys worth a plan, but not a quarter more than 8.
  EXPECT_THAT(Answer(Listing(31, Keys(1, 2, 4)), kT0 + kEarly),
              ElementsAre("send own list ns/f @31"));
  EXPECT_EQ(DeclinedAt(), 8u);
  // An odd answer, a back-off, and a re-list.
  EXPECT_THAT(Answer(Listing(31, Keys(1, 2, 4)), kT0 + 2 * kEarly), ElementsAre("wait own +3s"));
  Step(rules_, &state_, TimerFired{kT0 + absl::Seconds(3), kT0 + absl::Seconds(3)});
  std::vector<std::string> actions = Answer(Listing(31, Keys(1, 2, 4)), kT0 + absl::Seconds(3));
  ASSERT_GE(actions.size(), 2u);
  EXPECT_EQ(actions[0], "count relist");
  EXPECT_EQ(actions[1], "log debug");
}

}  // namespace
}  // namespace registry::watch::testing
