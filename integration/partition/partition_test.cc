// integration/partition/partition_test.cc
//
// Network partitions of a real 3-server Consul 1.8.7 cluster and of the plugin instances using
// it, each in a network namespace of its own (partition_fixture.h): one test per fault, each
// healed before the end and followed by the fixture's checks (no forbidden overlap, no lost
// increment, ephemeral keys back, watch converged, no unexplained failure).
//
//  1. the leader cut off from its followers (clients still reach every server);
//  2. the lock holder cut off from everything for longer than 2 x TTL + lock-delay: it must be
//     told it lost the lock before anyone else gets it; with it the app, holding the fenced
//     lock, whose write after the heal must be refused;
//  3. a split: the leader and half the clients | the two other servers and the other half,
//     the lock holder among them (the majority elects a leader and keeps the lock going, the
//     minority's instances come back after the heal);
//  4. the minority split: the lock holder with one follower | every other server and client.
//     The follower answers "no leader" while the majority expires the holder's session and
//     hands the lock on; the holder must stop first;
//  5. 5 % packet loss on the leader, both ways.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/partition/partition_fixture.h"

namespace registry::partition {
namespace {

// How long the faults that need no take-over last: a few elections' worth.
constexpr absl::Duration kShortFault = absl::Seconds(8);
// Long enough for the majority to expire a cut-off session and its lock-delay to pass.
const absl::Duration kTakeOverFault = kTakeOver + absl::Seconds(3);
constexpr absl::Duration kLossFault = absl::Seconds(15);

// Holds the fault until `began` + `length`: the schedule of the fault, while the load runs.
void HoldFault(absl::Time began, absl::Duration length) {
  absl::SleepFor(began + length - absl::Now());
}

// Records, once a leader is back, how long the majority went without one since the fault began.
void NoteElection(FaultRecord& fault) {
  fault.leaderless = absl::Now() - fault.began;
  // A session renewed just before the fault has a TTL left, one renewed just before its next
  // renewal only half a TTL.
  fault.sessions_at_risk = fault.leaderless >= kTtl / 2;
}

// Whether a section of a node other than `node` started within [from, to].
bool SomeoneElseRan(const std::vector<integration::Section>& sections, LockWorkers& workers,
                    int node, absl::Time from, absl::Time to) {
  for (const integration::Section& s : sections) {
    if (!s.start.has_value()) continue;
    const absl::Time start = absl::FromUnixNanos(*s.start);
    if (start >= from && start <= to && workers.NodeOf(s.tag) != node) {
      return true;
    }
  }
  return false;
}

TEST_F(PartitionTest, LeaderCutOffFromItsFollowers) {
  absl::StatusOr<int> leader = consul_->AwaitLeader(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  std::vector<int> followers;
  for (int i = 0; i < consul_->size(); ++i) {
    if (i != *leader) followers.push_back(server(i));
  }
  FaultRecord fault{.name = absl::StrCat("leader s", *leader, " cut off from its followers")};
  fault.began = absl::Now();
  ASSERT_EQ(lab_->Partition({server(*leader)}, followers), absl::OkStatus());
  absl::StatusOr<int> next = consul_->AwaitLeader(kShortFault, *leader);
  EXPECT_TRUE(next.ok()) << next.status();
  NoteElection(fault);
  HoldFault(fault.began, kShortFault);
  HealAndCheck(fault);
}

TEST_F(PartitionTest, LockHolderCutOffFromEverythingPastTwoTtlsAndTheLockDelay) {
  // The app's fenced writer takes the fenced lock and waits before its write; cut off with the
  // lock holder, it loses that hold, and writes only after the heal, when other writers have
  // moved the fenced counter on: a stale holder's write, which must be refused.
  FencedWriter& stale = *fenced_[kApp];
  ASSERT_TRUE(stale.StallNextHold(absl::Seconds(30)))
      << "the app's fenced writer got no hold within 30 s";
  std::optional<RunningSection> holder = AwaitLongSection();
  ASSERT_TRUE(holder.has_value());
  FaultRecord fault{.name = absl::StrCat("lock holder ", lab_->name(holder->node),
                                         " and the app (holding the fenced lock) isolated"),
                    .cut = {holder->node, kApp},
                    .holder_tag = holder->tag};
  fault.began = absl::Now();
  ASSERT_EQ(lab_->Isolate(holder->node), absl::OkStatus());
  ASSERT_EQ(lab_->Isolate(kApp), absl::OkStatus());
  stale.EndStallAt(fault.began + kTakeOverFault + absl::Seconds(1));
  HoldFault(fault.began, kTakeOverFault);
  const Outcome outcome = HealAndCheck(fault);
  for (const Iteration& run : outcome.runs) {
    if (run.tag == holder->tag) {
      EXPECT_EQ(run.exit_code, integration::kExitLockLost) << "the cut-off holder was not told";
    }
  }
  EXPECT_TRUE(SomeoneElseRan(outcome.sections, *workers_, holder->node, fault.began, fault.healed))
      << "the lock never moved on while its holder was cut off";
  int stale_writes = 0;
  for (const FencedAttempt& attempt : outcome.fenced) {
    if (!attempt.stalled) continue;
    ++stale_writes;
    EXPECT_TRUE(absl::IsAborted(attempt.status) || absl::IsFailedPrecondition(attempt.status))
        << "the stale holder's fenced write of " << attempt.value << ": " << attempt.status;
    std::printf("  stale fenced write of %lld refused: %s\n", static_cast<long long>(attempt.value),
                attempt.status.ToString().c_str());
  }
  EXPECT_EQ(stale_writes, 1) << "the stale holder never tried its write";
}

TEST_F(PartitionTest, SplitLeaderAndHalfTheClientsFromTheOtherServersAndTheHolder) {
  absl::StatusOr<int> leader = consul_->AwaitLeader(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  std::optional<RunningSection> holder = AwaitLongSection();
  ASSERT_TRUE(holder.has_value());
  // Minority: the leader, the app and two lock nodes; majority: the other servers, the holder
  // and the last lock node.
  const std::vector<int> others = WorkersBut(holder->node);
  std::vector<int> minority = {server(*leader), kApp, others[0], others[1]};
  std::vector<int> majority = {holder->node, others[2]};
  for (int i = 0; i < consul_->size(); ++i) {
    if (i != *leader) majority.push_back(server(i));
  }
  FaultRecord fault{.name = absl::StrCat("split s", *leader, "+app+", lab_->name(others[0]), "+",
                                         lab_->name(others[1]), " | the rest, holder ",
                                         lab_->name(holder->node), " in the majority"),
                    .cut = {kApp, others[0], others[1]}};
  fault.began = absl::Now();
  ASSERT_EQ(lab_->Partition(minority, majority), absl::OkStatus());
  absl::StatusOr<int> next = consul_->AwaitLeader(kTakeOverFault, *leader);
  EXPECT_TRUE(next.ok()) << next.status();
  NoteElection(fault);
  // If the slow election cost the holder its session (a false loss), the lock stays with that
  // session until the new leader expires it (2 x TTL) and the lock-delay passes: the majority
  // gets it back only then.
  HoldFault(fault.began, std::max(kTakeOverFault, fault.leaderless + kTakeOverFault));
  const Outcome outcome = HealAndCheck(fault);
  EXPECT_TRUE(SomeoneElseRan(outcome.sections, *workers_, -1, fault.began, fault.healed))
      << "the majority stopped taking the lock during the split";
}

TEST_F(PartitionTest, MinoritySplitOfTheLockHolderWithOneFollower) {
  absl::StatusOr<int> leader = consul_->AwaitLeader(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  std::optional<RunningSection> holder = AwaitLongSection();
  ASSERT_TRUE(holder.has_value());
  const int follower = (*leader + 1) % consul_->size();
  std::vector<int> majority = WorkersBut(holder->node);
  majority.push_back(kApp);
  for (int i = 0; i < consul_->size(); ++i) {
    if (i != follower) majority.push_back(server(i));
  }
  FaultRecord fault{.name = absl::StrCat("minority split: holder ", lab_->name(holder->node),
                                         " + follower s", follower, " | the rest"),
                    .cut = {holder->node},
                    .holder_tag = holder->tag};
  fault.began = absl::Now();
  ASSERT_EQ(lab_->Partition({holder->node, server(follower)}, majority), absl::OkStatus());
  HoldFault(fault.began, kTakeOverFault);
  const Outcome outcome = HealAndCheck(fault);
  EXPECT_TRUE(SomeoneElseRan(outcome.sections, *workers_, holder->node, fault.began, fault.healed))
      << "the majority never took the lock over from the cut-off holder";
  ASSERT_TRUE(outcome.handover.margin.has_value());
  EXPECT_GT(*outcome.handover.margin, absl::ZeroDuration())
      << "the cut-off holder " << holder->tag << " still ran when " << *outcome.handover.next
      << " began";
}

TEST_F(PartitionTest, FivePercentPacketLossOnTheLeader) {
  absl::StatusOr<int> leader = consul_->AwaitLeader(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  FaultRecord fault{.name = absl::StrCat("5% packet loss on leader s", *leader)};
  fault.began = absl::Now();
  ASSERT_EQ(lab_->Loss(server(*leader), 5), absl::OkStatus());
  HoldFault(fault.began, kLossFault);
  HealAndCheck(fault);
}

}  // namespace
}  // namespace registry::partition
