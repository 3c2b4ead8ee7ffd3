// SPDX-License-Identifier: Apache-2.0
// The query machine (watch/query_machine.h) of unsplit watches, driven input by input with no
// server and no clock: every answer a watch's own query can get, in every state it can get it,
// and the convergence rules the integration tests of integration/watch pin end to end.
#include "watch/query_machine.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/watch/query_machine_testing.h"

namespace registry::watch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Phase = QueryState::Phase;

const absl::Duration kEarly = absl::Seconds(1);  // an answer this long after its query: early

class TreeWatchTest : public ::testing::Test {
 protected:
  // A watch on "ns/a" started from x=1 and y=1 (ModifyIndex 5) at index 5, its query sent at
  // kT0.
  TreeWatchTest()
      : state_(StartedTreeWatch(rules_, "ns/a", 5, {{"ns/a/x", "1", 5}, {"ns/a/y", "1", 5}})) {}

  std::vector<std::string> Answer(const Reply& reply, absl::Time at) {
    return Step(rules_, &state_, reply.To(kOwnQuery, at));
  }
  std::vector<std::string> Timer(absl::Time at) {
    return Step(rules_, &state_, TimerFired{at, at});
  }
  // The answer to the query in flight: an early one, or one after the whole wait.
  absl::Time Early() const { return state_.own.sent_at + kEarly; }
  absl::Time AfterTheWait() const { return state_.own.sent_at + kWait; }

  const QueryRules rules_ = TestRules();
  WatchState state_;
};

TEST_F(TreeWatchTest, TheFirstQueryBlocksOnTheIndexOfTheStartingListing) {
  consul::KvListResult listing;
  listing.meta.index = 5;
  listing.entries.push_back(consul::DirEntry{"ns/a/x", "1", 0, "", 0, 5, 5});
  std::vector<DataChangedEvent> replay;
  WatchState state = NewTreeWatch(rules_, WatchScope("ns/a"), listing, &replay);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].key, "ns/a/x");
  EXPECT_EQ(state.own.phase, Phase::kIdle);
  EXPECT_THAT(Step(rules_, &state, Started{kT0}), ElementsAre("send own list ns/a @5"));
  EXPECT_EQ(state.own.phase, Phase::kSent);
  EXPECT_EQ(state.own.sent_at, kT0);
}

TEST_F(TreeWatchTest, ANewIndexIsDiffedByModifyIndexAndTheNextQueryBlocksOnIt) {
  // Early is fine when the index moved: a change answers at once.
  EXPECT_THAT(Answer(Listing(8, {{"ns/a/x", "2", 8}, {"ns/a/z", "1", 7}}), Early()),
              ElementsAre("deliver UPDATED ns/a/x=2, DELETED ns/a/y=1, ADDED ns/a/z=1",
                          "send own list ns/a @8"));
  EXPECT_EQ(state_.next, NextRead::kBlocking);
}

TEST_F(TreeWatchTest, ARewriteWithTheSameModifyIndexIsNoChangeWhileTheIndexMoves) {
  EXPECT_THAT(Answer(Listing(9, {{"ns/a/x", "other", 5}, {"ns/a/y", "1", 5}}), Early()),
              ElementsAre("send own list ns/a @9"));
}

// Rule 3: a reset that landed on this very index unseen changes content, not the index.
TEST_F(TreeWatchTest, AnUnchangedIndexAfterTheWholeWaitIsComparedByContent) {
  EXPECT_THAT(Answer(Listing(5, {{"ns/a/x", "changed", 5}, {"ns/a/y", "1", 5}}), AfterTheWait()),
              ElementsAre("deliver UPDATED ns/a/x=changed", "send own list ns/a @5"));
  EXPECT_THAT(Answer(Listing(5, {{"ns/a/x", "changed", 5}, {"ns/a/y", "1", 5}}), AfterTheWait()),
              ElementsAre("send own list ns/a @5"));
}

// Rules 2 and 6: a suspicious answer starts a run of back-offs that a re-list does not end.
TEST_F(TreeWatchTest, AnEarlyUnchangedIndexBacksOffAndReListsByContent) {
  const absl::Time first = Early();
  EXPECT_THAT(Answer(Listing(5, {{"ns/a/x", "changed", 5}}), first), ElementsAre("wait own +2s"));
  EXPECT_EQ(state_.next, NextRead::kRelist);
  EXPECT_EQ(state_.own.phase, Phase::kWaiting);
  EXPECT_THAT(Timer(first + kBackoffUnit), ElementsAre("send own list ns/a @0"));
  EXPECT_THAT(Answer(Listing(5, {{"ns/a/x", "changed", 5}}), first + kBackoffUnit),
              ElementsAre("deliver UPDATED ns/a/x=changed, DELETED ns/a/y=1", "count relist",
                          "send own list ns/a @5"));
  EXPECT_EQ(state_.backoffs, 1) << "a re-list does not end a run of suspicious answers";
  // The next odd answer waits longer; a proper blocking answer ends the run.
  EXPECT_THAT(Answer(Listing(5, {}), Early()), ElementsAre("wait own +5s"));
  EXPECT_THAT(Timer(kT0 + absl::Seconds(5)), ElementsAre("send own list ns/a @0"));
  EXPECT_THAT(
      Answer(Listing(5, {}), kT0 + absl::Seconds(5)),
      ElementsAre("deliver DELETED ns/a/x=changed", "count relist", "send own list ns/a @5"));
  EXPECT_THAT(Answer(Listing(6, {}), Early()), ElementsAre("send own list ns/a @6"));
  EXPECT_EQ(state_.backoffs, 0);
}

// Rules 4 and 5: a restarted server answers from a state older than the one reported until it
// has replayed its log; the watch reports only the consistent re-list that follows.
TEST_F(TreeWatchTest, AnIndexResetIsNotReportedButReListedAtOnce) {
  EXPECT_THAT(Answer(Listing(3, {{"ns/a/x", "old", 2}}), AfterTheWait()),
              ElementsAre("send own list ns/a @0"));
  EXPECT_EQ(state_.next, NextRead::kRelist);
  EXPECT_THAT(Answer(Listing(4, {{"ns/a/x", "2", 4}, {"ns/a/y", "1", 1}}), AfterTheWait()),
              ElementsAre("deliver UPDATED ns/a/x=2", "count relist", "send own list ns/a @4"));
  EXPECT_EQ(state_.backoffs, 0);
}

TEST_F(TreeWatchTest, AnEarlyIndexResetBacksOffAndThenReLists) {
  EXPECT_THAT(Answer(Listing(3, {{"ns/a/x", "2", 2}}), Early()), ElementsAre("wait own +2s"));
  EXPECT_TRUE(state_.backoff_suspicious);
  EXPECT_EQ(state_.next, NextRead::kRelist);
  EXPECT_THAT(Timer(Early() + kBackoffUnit), ElementsAre("send own list ns/a @0"));
}

// diff.h: a known key whose ModifyIndex went back spans two histories, though the listing's
// index grew.
TEST_F(TreeWatchTest, AKnownKeysIndexGoingBackwardsIsComparedByContent) {
  EXPECT_THAT(Answer(Listing(60, {{"ns/a/x", "rewritten", 3}, {"ns/a/y", "1", 4}}), Early()),
              ElementsAre("deliver UPDATED ns/a/x=rewritten", "send own list ns/a @60"));
}

TEST_F(TreeWatchTest, NothingThere404IsAnEmptySubtree) {
  EXPECT_THAT(Answer(NothingThere(9), Early()),
              ElementsAre("deliver DELETED ns/a/x=1, DELETED ns/a/y=1", "send own list ns/a @9"));
}

// Rule 1, and the end of a run of failures.
TEST_F(TreeWatchTest, Forbidden403BacksOffWithoutAvoidingTheServerAndReListsAfter) {
  const absl::Time failed = Early();
  EXPECT_THAT(Answer(HttpError(403, "Permission denied"), failed),
              ElementsAre("log warn", "wait own +2s"));
  EXPECT_EQ(state_.failures, 1);
  EXPECT_THAT(Timer(failed + kBackoffUnit), ElementsAre("send own list ns/a @0"));
  // The re-list ends the failures' run (the server answers again) and is diffed by content.
  EXPECT_THAT(Answer(Listing(6, {{"ns/a/x", "1", 5}, {"ns/a/y", "1", 5}}), failed + kEarly),
              ElementsAre("count relist", "log info", "send own list ns/a @6"));
  EXPECT_EQ(state_.failures, 0);
  EXPECT_EQ(state_.backoffs, 0);
}

TEST_F(TreeWatchTest, NoLeader5xxAvoidsTheServerAndBacksOff) {
  EXPECT_THAT(Answer(HttpError(500, "No cluster leader"), Early()),
              ElementsAre("avoid server", "log warn", "wait own +2s"));
  EXPECT_EQ(state_.next, NextRead::kRelist);
  EXPECT_FALSE(state_.backoff_suspicious);
}

TEST_F(TreeWatchTest, ATransportErrorAvoidsTheServerAndBacksOff) {
  EXPECT_THAT(Answer(TransportError(), AfterTheWait()),
              ElementsAre("avoid server", "log warn", "wait own +1m1s"));
}

TEST_F(TreeWatchTest, AMalformedAnswerAvoidsTheServerAndBacksOff) {
  EXPECT_THAT(Answer(Malformed(8), Early()),
              ElementsAre("avoid server", "log warn", "wait own +2s"));
  EXPECT_EQ(state_.next, NextRead::kRelist);
}

TEST_F(TreeWatchTest, ACancelledQueryBacksOffWithoutAvoidingTheServer) {
  EXPECT_THAT(Answer(Cancelled(), Early()), ElementsAre("log warn", "wait own +2s"));
}

TEST_F(TreeWatchTest, FailuresInARowWaitLongerAndAreLoggedOnce) {
  EXPECT_THAT(Answer(TransportError(), kT0),
              ElementsAre("avoid server", "log warn", "wait own +1s"));
  EXPECT_THAT(Timer(kT0 + absl::Seconds(1)), ElementsAre("send own list ns/a @0"));
  EXPECT_THAT(Answer(HttpError(503, "busy"), kT0 + absl::Seconds(1)),
              ElementsAre("avoid server", "wait own +3s"));
  EXPECT_THAT(Timer(kT0 + absl::Seconds(3)), ElementsAre("send own list ns/a @0"));
  EXPECT_THAT(Answer(HttpError(403, "ACL not found"), kT0 + absl::Seconds(3)),
              ElementsAre("wait own +6s"));
  EXPECT_EQ(state_.failures, 3);
}

TEST_F(TreeWatchTest, ARequestThatCannotStartIsAFailure) {
  EXPECT_THAT(Step(rules_, &state_, NotSent{absl::ResourceExhaustedError("no handle"), kT0}),
              ElementsAre("log warn", "wait own +1s"));
  EXPECT_EQ(state_.next, NextRead::kRelist);
}

TEST_F(TreeWatchTest, ATimerNoQueryWaitsForIsStale) {
  EXPECT_THAT(Timer(kT0 + absl::Seconds(1)), IsEmpty());
  Answer(HttpError(403, "Permission denied"), kT0);  // waits until +1s
  EXPECT_THAT(Timer(kT0 + absl::Seconds(2)), IsEmpty());
  EXPECT_THAT(Timer(kT0 + absl::Seconds(1)), ElementsAre("send own list ns/a @0"));
  EXPECT_THAT(Timer(kT0 + absl::Seconds(1)), IsEmpty()) << "a query starts once per wait";
}

TEST_F(TreeWatchTest, AnAnswerOfAProbeOfNoSplitIsIgnored) {
  EXPECT_THAT(Step(rules_, &state_, Listing(9, {}).To(0, Early())), IsEmpty());
  EXPECT_EQ(state_.own.phase, Phase::kSent);
}

// Rule 7.
TEST_F(TreeWatchTest, ABlockingQueryMayOpenANewConnectionOnlyWithAFreshIndex) {
  // The index of the starting listing is fresh.
  EXPECT_TRUE(MayOpenConnection(state_, kOwnQuery));
  Answer(Listing(8, {{"ns/a/x", "1", 5}, {"ns/a/y", "1", 5}}), Early());
  EXPECT_FALSE(MayOpenConnection(state_, kOwnQuery)) << "its connection may have lost the index";
  // Refused: no failure, no back-off; the watch re-lists at once on a new connection.
  EXPECT_THAT(Step(rules_, &state_, ConnectionRefused{Early()}),
              ElementsAre("send own list ns/a @0"));
  EXPECT_TRUE(MayOpenConnection(state_, kOwnQuery));
  EXPECT_EQ(state_.failures, 0);
  EXPECT_EQ(state_.backoffs, 0);
  EXPECT_THAT(Answer(Listing(9, {{"ns/a/x", "1", 5}, {"ns/a/y", "1", 5}}), Early()),
              ElementsAre("count relist", "send own list ns/a @9"));
  EXPECT_TRUE(MayOpenConnection(state_, kOwnQuery)) << "an index from a plain read is fresh";
}

class KeyWatchTest : public ::testing::Test {
 protected:
  std::vector<std::string> Answer(const Reply& reply, absl::Time at) {
    return Step(rules_, &state_, reply.To(kOwnQuery, at));
  }

  const QueryRules rules_ = TestRules();
  WatchState state_ = NewKeyWatch(WatchScope("ns/k"), absl::InfinitePast());
};

TEST_F(KeyWatchTest, MakesNoRequestBeforeItsStartTime) {
  state_ = NewKeyWatch(WatchScope("ns/k"), kT0 + absl::Seconds(30));
  EXPECT_THAT(Step(rules_, &state_, Started{kT0}), ElementsAre("wait own +30s"));
  EXPECT_THAT(Step(rules_, &state_, TimerFired{kT0 + absl::Seconds(10), kT0}), IsEmpty());
  EXPECT_THAT(Step(rules_, &state_, TimerFired{kT0 + absl::Seconds(30), kT0}),
              ElementsAre("send own get ns/k @0"));
}

TEST_F(KeyWatchTest, ReportsTheFirstStateThenEachEntryThatDiffers) {
  EXPECT_THAT(Step(rules_, &state_, Started{kT0}), ElementsAre("send own get ns/k @0"));
  EXPECT_THAT(Answer(NothingThere(4), kT0), ElementsAre("report absent", "send own get ns/k @4"));
  EXPECT_THAT(Answer(KeyAnswer(7, {"ns/k", "v", 7}), kT0 + kEarly),
              ElementsAre("report ns/k=v@7", "send own get ns/k @7"));
  // After the whole wait: compared whole, the same entry is not reported again.
  EXPECT_THAT(Answer(KeyAnswer(7, {"ns/k", "v", 7}), kT0 + kEarly + kWait),
              ElementsAre("send own get ns/k @7"));
  // Another key's write moved the index: the same entry again.
  EXPECT_THAT(Answer(KeyAnswer(9, {"ns/k", "v", 7}), kT0 + 2 * kWait),
              ElementsAre("send own get ns/k @9"));
  EXPECT_THAT(Answer(NothingThere(12), kT0 + 2 * kWait + kEarly),
              ElementsAre("report absent", "send own get ns/k @12"));
}

TEST_F(KeyWatchTest, AfterAnIndexResetTheReReadEntryWithOtherIndexesIsReportedAgain) {
  Step(rules_, &state_, Started{kT0});
  Answer(KeyAnswer(7, {"ns/k", "v", 7}), kT0);
  EXPECT_THAT(Answer(KeyAnswer(3, {"ns/k", "older", 2}), kT0 + kWait),
              ElementsAre("send own get ns/k @0"));
  EXPECT_THAT(Answer(KeyAnswer(3, {"ns/k", "v", 2}), kT0 + 2 * kWait),
              ElementsAre("report ns/k=v@2", "send own get ns/k @3"))
      << "a key watch counts no tree re-list";
}

TEST_F(KeyWatchTest, RidesThroughFailedReadsWithoutReportingThem) {
  Step(rules_, &state_, Started{kT0});
  Answer(KeyAnswer(7, {"ns/k", "v", 7}), kT0);
  EXPECT_THAT(Answer(HttpError(500, "No cluster leader"), kT0 + kEarly),
              ElementsAre("avoid server", "log warn", "wait own +2s"));
  EXPECT_THAT(Step(rules_, &state_, TimerFired{kT0 + absl::Seconds(2), kT0 + absl::Seconds(2)}),
              ElementsAre("send own get ns/k @0"));
  EXPECT_THAT(Answer(KeyAnswer(8, {"ns/k", "v", 7}), kT0 + absl::Seconds(2)),
              ElementsAre("log info", "send own get ns/k @8"));
}

}  // namespace
}  // namespace registry::watch::testing
