// SPDX-License-Identifier: Apache-2.0
// integration/partition/partition_test.cc
//
// Network partitions of a real 3-server Consul 1.8.7 cluster and of the plugin instances using
// it, each in a network namespace of its own (partition_fixture.h): one test per fault and
// topology, each healed before the end and followed by the fixture's checks (no forbidden
// overlap, no lost increment, ephemeral keys back, watch converged, no unexplained failure).
// The faults are written once (partition_faults.cc); PartitionTest runs them with the instances
// talking to the servers, ClientAgentPartitionTest with a client agent on every instance node.
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
//  5. 5 % packet loss on the leader, both ways;
//  6. (client agents only) the agent of the lock holder's node killed (SIGKILL) for longer than
//     2 x TTL + lock-delay, then restarted on its data dir.
//
//  7. clock-rate faults: fault 2 with the lock clients' monotonic clocks running slow or fast
//     (integration/testing/clock_rate_preload.c). lock/README.md ("Clock rates") derives the
//     rates the safety margin tolerates: a holder must still stop before anyone else holds the
//     lock. CI runs the slow clock x0.90; scripts/fault-runs.sh runs the tolerated ones too, and
//     the DISABLED_BeyondTheMargin rates show what happens past the tolerance.
//
// CI budget: ctest runs every test but the DISABLED_ ones (registered, reported "Not Run
// (Disabled)"); scripts/fault-runs.sh runs them all (--gtest_also_run_disabled_tests). The
// client topology's leader cut-off, split and packet loss are DISABLED_: with them the label
// would take about twice its time, and what they add to the servers' runs is least (agents
// reach every server, or the split's cut nodes behave as in the holder isolation).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/partition/partition_fixture.h"

namespace registry::partition {
namespace {

TEST_F(PartitionTest, LeaderCutOffFromItsFollowers) { FaultLeaderCutOffFromItsFollowers(); }

TEST_F(PartitionTest, LockHolderCutOffFromEverythingPastTwoTtlsAndTheLockDelay) {
  FaultLockHolderIsolatedPastTheTakeOver();
}

TEST_F(PartitionTest, SplitLeaderAndHalfTheClientsFromTheOtherServersAndTheHolder) {
  FaultSplitOfTheLeaderAndHalfTheClients();
}

TEST_F(PartitionTest, MinoritySplitOfTheLockHolderWithOneFollower) {
  FaultMinoritySplitOfTheHolderWithOneFollower();
}

TEST_F(PartitionTest, FivePercentPacketLossOnTheLeader) { FaultPacketLossOnTheLeader(); }

TEST_F(ClientAgentPartitionTest, DISABLED_LeaderCutOffFromItsFollowers) {
  FaultLeaderCutOffFromItsFollowers();
}

TEST_F(ClientAgentPartitionTest, LockHolderCutOffFromEverythingPastTwoTtlsAndTheLockDelay) {
  FaultLockHolderIsolatedPastTheTakeOver();
}

TEST_F(ClientAgentPartitionTest,
       DISABLED_SplitLeaderAndHalfTheClientsFromTheOtherServersAndTheHolder) {
  FaultSplitOfTheLeaderAndHalfTheClients();
}

TEST_F(ClientAgentPartitionTest, MinoritySplitOfTheLockHolderWithOneFollower) {
  FaultMinoritySplitOfTheHolderWithOneFollower();
}

TEST_F(ClientAgentPartitionTest, DISABLED_FivePercentPacketLossOnTheLeader) {
  FaultPacketLossOnTheLeader();
}

TEST_F(ClientAgentPartitionTest, HolderClientAgentKilledPastTwoTtlsAndTheLockDelay) {
  FaultClientAgentOfTheHolderKilled();
}

// The lock clients' monotonic clocks run at `rate` times the host's (clock_rate_preload.c).
struct ClockRate {
  std::string name;
  double rate = 1.0;
};

class ClockRatePartitionTest : public PartitionTest,
                               public ::testing::WithParamInterface<ClockRate> {
 protected:
  ClockRatePartitionTest() {
    lock_client_prefix_ = {"env", absl::StrCat("LD_PRELOAD=", REGISTRY_CLOCK_RATE_PRELOAD),
                           absl::StrCat("REGISTRY_CLOCK_RATE=", GetParam().rate)};
  }
};

TEST_P(ClockRatePartitionTest, LockHolderCutOffFromEverythingPastTwoTtlsAndTheLockDelay) {
  FaultLockHolderIsolatedPastTheTakeOver();
}

std::string RateName(const ::testing::TestParamInfo<ClockRate>& info) { return info.param.name; }

// Within the tolerance (lock/README.md, "Clock rates": a rate above 1/2 with the suite's TTL and
// lock-delay, above 1/3 in practice).
INSTANTIATE_TEST_SUITE_P(Ci, ClockRatePartitionTest, ::testing::Values(ClockRate{"slow_0_90", 0.9}),
                         RateName);
INSTANTIATE_TEST_SUITE_P(DISABLED_Tolerated, ClockRatePartitionTest,
                         ::testing::Values(ClockRate{"slow_0_95", 0.95},
                                           ClockRate{"fast_1_05", 1.05},
                                           ClockRate{"fast_1_10", 1.10},
                                           ClockRate{"slow_0_60", 0.60}),
                         RateName);
// Beyond it: lock/README.md says what these showed.
INSTANTIATE_TEST_SUITE_P(DISABLED_BeyondTheMargin, ClockRatePartitionTest,
                         ::testing::Values(ClockRate{"slow_0_40", 0.40},
                                           ClockRate{"slow_0_25", 0.25}),
                         RateName);

}  // namespace
}  // namespace registry::partition
