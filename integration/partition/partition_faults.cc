// SPDX-License-Identifier: Apache-2.0
// integration/partition/partition_faults.cc
//
// The faults of the partition tests (PartitionTest::Fault*, partition_fixture.h), written once
// for both topologies: each injects its fault while the load runs, holds it, and calls
// HealAndCheck() plus its own checks. Faults aimed at "the leader" or "a follower" aim at
// servers in either topology; those aimed at an instance node cut its client agent with it
// (they share the namespace).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/partition/partition_fixture.h"
#include "nlohmann/json.hpp"

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
  fault.sessions_at_risk = LeaderlessPutsSessionsAtRisk(fault.leaderless, kTtl, kRenewRetry);
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

// The sessions Consul lists on catalog node `node_name`, each as "<id prefix> checks [...]":
// what binds them besides their TTL.
std::string SessionsOfNode(LabConsul& consul, const std::string& node_name) {
  absl::StatusOr<std::optional<std::string>> body =
      consul.Get(absl::StrCat("/v1/session/node/", node_name));
  if (!body.ok() || !body->has_value()) return "unreadable";
  const nlohmann::json sessions = nlohmann::json::parse(**body, nullptr, false);
  if (!sessions.is_array()) return "unreadable";
  std::vector<std::string> described;
  for (const nlohmann::json& session : sessions) {
    std::vector<std::string> checks;
    for (const char* field : {"Checks", "NodeChecks"}) {
      if (!session.contains(field) || !session[field].is_array()) continue;
      for (const nlohmann::json& check : session[field]) {
        if (check.is_string()) checks.push_back(check.get<std::string>());
      }
    }
    described.push_back(absl::StrCat(session.value("ID", "?").substr(0, 8), " checks [",
                                     absl::StrJoin(checks, ","), "]"));
  }
  return absl::StrCat(described.size(), ": ", absl::StrJoin(described, "; "));
}

}  // namespace

absl::Duration PartitionTest::CutEveryAgentUntilTheLockMovesOn(int other_than, FaultRecord& fault) {
  if (agents_ == nullptr) return absl::ZeroDuration();
  // A client agent sends every RPC to one server of its list, and leaves it only when serf
  // calls it failed or a call fails outright (a dropped packet only makes it hang). An instance
  // on the majority side whose agent happens to use the cut server is cut off from the majority
  // until then; which agents do is not visible from outside, so every instance node counts as
  // cut (the failures it excuses are those of partition_checks.h's cut nodes), and the fault
  // lasts until the lock has moved on (seen: at the usual take-over, or not within 12 s when
  // the three other lock nodes' agents all used the cut server).
  for (int node : kWorkers) fault.cut.insert(node);
  fault.cut.insert(kApp);
  std::optional<absl::Duration> moved_on;
  while (!moved_on.has_value() && absl::Now() < fault.began + kRecovery) {
    std::optional<RunningSection> running = workers_->AwaitRunning(kPoll, false);
    if (running.has_value() && running->node != other_than && running->started > fault.began) {
      moved_on = running->started - fault.began;
    } else if (running.has_value()) {
      absl::SleepFor(kPoll);  // the section found is not the one awaited: pace the next look
    }
  }
  EXPECT_TRUE(moved_on.has_value()) << "the lock never moved on during the fault";
  std::printf("  the lock moved on to the majority %s after the fault began\n",
              moved_on.has_value() ? Ms(*moved_on).c_str() : "never");
  return moved_on.value_or(kRecovery) + absl::Seconds(1);
}

void PartitionTest::FaultLeaderCutOffFromItsFollowers() {
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

void PartitionTest::FaultLockHolderIsolatedPastTheTakeOver() {
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

void PartitionTest::FaultSplitOfTheLeaderAndHalfTheClients() {
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
  HoldFault(fault.began, std::max({kTakeOverFault, fault.leaderless + kTakeOverFault,
                                   CutEveryAgentUntilTheLockMovesOn(-1, fault)}));
  const Outcome outcome = HealAndCheck(fault);
  EXPECT_TRUE(SomeoneElseRan(outcome.sections, *workers_, -1, fault.began, fault.healed))
      << "the majority stopped taking the lock during the split";
}

void PartitionTest::FaultMinoritySplitOfTheHolderWithOneFollower() {
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
  HoldFault(fault.began,
            std::max(kTakeOverFault, CutEveryAgentUntilTheLockMovesOn(holder->node, fault)));
  const Outcome outcome = HealAndCheck(fault);
  EXPECT_TRUE(SomeoneElseRan(outcome.sections, *workers_, holder->node, fault.began, fault.healed))
      << "the majority never took the lock over from the cut-off holder";
  ASSERT_TRUE(outcome.handover.margin.has_value());
  EXPECT_GT(*outcome.handover.margin, absl::ZeroDuration())
      << "the cut-off holder " << holder->tag << " still ran when " << *outcome.handover.next
      << " began";
}

void PartitionTest::FaultPacketLossOnTheLeader() {
  absl::StatusOr<int> leader = consul_->AwaitLeader(absl::Seconds(10));
  ASSERT_TRUE(leader.ok()) << leader.status();
  FaultRecord fault{.name = absl::StrCat("5% packet loss on leader s", *leader)};
  fault.began = absl::Now();
  ASSERT_EQ(lab_->Loss(server(*leader), 5), absl::OkStatus());
  HoldFault(fault.began, kLossFault);
  HealAndCheck(fault);
}

void PartitionTest::FaultClientAgentOfTheHolderKilled() {
  ASSERT_NE(agents_, nullptr) << "a fault of the client-agent topology";
  std::optional<RunningSection> holder = AwaitLongSection();
  ASSERT_TRUE(holder.has_value());
  const int node = holder->node;
  const std::string name = lab_->name(node);
  const std::string key = absl::StrCat("/online/", name);
  // With `sessionNode: ""` the sessions of the node's instances are on the agent's node; what
  // else than their TTL binds them is what Consul lists as their checks.
  std::printf("  sessions on node %s before the kill: %s\n", name.c_str(),
              SessionsOfNode(*consul_, name).c_str());
  FaultRecord fault{.name = absl::StrCat("client agent of lock holder ", name,
                                         " killed (SIGKILL), restarted on its data dir"),
                    .cut = {node},
                    .holder_tag = holder->tag};
  fault.began = absl::Now();
  ASSERT_EQ(agents_->Kill(node), absl::OkStatus());
  // While the agent is down: when the servers call its node failed, when the key goes.
  std::optional<absl::Duration> failed_after, key_gone_after;
  while (absl::Now() < fault.began + kTakeOverFault) {
    if (!failed_after.has_value() && agents_->HealthOf(node) == "critical") {
      failed_after = absl::Now() - fault.began;
    }
    if (!key_gone_after.has_value()) {
      absl::StatusOr<std::map<std::string, std::string>> held = ConsistentRead("/online", true);
      if (held.ok() && held->count(key) == 0) key_gone_after = absl::Now() - fault.began;
    }
    absl::SleepFor(kPoll);  // the pace of the two probes, until the fault's end
  }
  EXPECT_TRUE(key_gone_after.has_value())
      << key << " was still held " << Ms(kTakeOverFault) << " after its agent was killed";
  ASSERT_EQ(agents_->Restart(node), absl::OkStatus());
  fault.healed = absl::Now();
  std::optional<absl::Duration> key_back_after;
  while (!key_back_after.has_value() && absl::Now() - fault.healed < kRecovery) {
    absl::StatusOr<std::map<std::string, std::string>> held = ConsistentRead("/online", true);
    if (held.ok() && held->count(key) > 0) key_back_after = absl::Now() - fault.healed;
    if (!key_back_after.has_value()) absl::SleepFor(kPoll);
  }
  EXPECT_TRUE(key_back_after.has_value())
      << key << " not back, held by a session, " << Ms(kRecovery) << " after the restart";
  auto figure = [](const std::optional<absl::Duration>& d) {
    return d.has_value() ? Ms(*d) : std::string("never");
  };
  std::printf(
      "  agent of %s killed: its node failed (serfHealth critical) %s after the kill; %s gone "
      "%s after the kill; agent restarted %s after the kill; %s back (held by a session) %s "
      "after the restart\n",
      name.c_str(), figure(failed_after).c_str(), key.c_str(), figure(key_gone_after).c_str(),
      Ms(fault.healed - fault.began).c_str(), key.c_str(), figure(key_back_after).c_str());
  std::printf("  sessions on node %s after the restart: %s\n", name.c_str(),
              SessionsOfNode(*consul_, name).c_str());
  ::testing::Test::RecordProperty(
      "key_gone_ms", key_gone_after.has_value() ? absl::ToInt64Milliseconds(*key_gone_after) : -1);
  ::testing::Test::RecordProperty(
      "key_back_ms", key_back_after.has_value() ? absl::ToInt64Milliseconds(*key_back_after) : -1);

  const Outcome outcome = HealAndCheck(fault);
  for (const Iteration& run : outcome.runs) {
    if (run.tag == holder->tag) {
      EXPECT_EQ(run.exit_code, integration::kExitLockLost)
          << "the holder behind the killed agent was not told: " << run.err;
    }
  }
  for (const integration::Section& s : outcome.sections) {
    if (!s.start.has_value() || workers_->NodeOf(s.tag) != node) continue;
    const absl::Time start = absl::FromUnixNanos(*s.start);
    EXPECT_FALSE(start > fault.began && start < fault.healed)
        << s.tag << " took the lock while the agent of " << name << " was down";
  }
  EXPECT_TRUE(SomeoneElseRan(outcome.sections, *workers_, node, fault.began, fault.healed))
      << "the other nodes stopped taking the lock while the agent of " << name << " was down";
  ASSERT_TRUE(outcome.handover.margin.has_value());
  EXPECT_GT(*outcome.handover.margin, absl::ZeroDuration())
      << "the holder " << holder->tag << " behind the killed agent still ran when "
      << *outcome.handover.next << " began";
}

}  // namespace registry::partition
