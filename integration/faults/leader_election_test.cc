// SPDX-License-Identifier: Apache-2.0
// integration/faults/leader_election_test.cc
//
// A real 3-server Consul 1.8.7 cluster whose leader is killed (SIGKILL) while three instances
// write, read, hold ephemeral keys, take a shared lock and watch. Each killed server is
// restarted on its data dir once a new leader is elected, so the next kill meets a full cluster.
// Expected: no failed call (every election is shorter than the request timeout), no overlap,
// no ephemeral key lost, the watch converges on the store, and the history of every call
// (integration/history) passes the checker: each key linearizable, the lock's holds disjoint,
// the watcher's events in order.
//
// The CI run kills the leader once. scripts/fault-runs.sh sets REGISTRY_FAULT_KILLS=6 and
// REGISTRY_FAULT_KILL_EVERY_SECONDS=20 (a 2-minute run) and repeats it, then runs it under load:
// REGISTRY_FAULT_INSTANCES=32 (32 lock clients, 32 writers) and
// REGISTRY_FAULT_KEYS_PER_INSTANCE=6 (197 watched keys).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/faults/cluster_workload.h"
#include "integration/history/history_check.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/consul_cluster.h"

namespace registry::faults {
namespace {

using integration::ConsulCluster;

// The request timeout (10 s) less the time a call may already have spent when the leader died.
constexpr absl::Duration kLongestElectionRiddenThrough = absl::Seconds(8);

int EnvInt(const char* name, int fallback) {
  const char* text = std::getenv(name);
  int value = 0;
  return text != nullptr && absl::SimpleAtoi(text, &value) && value > 0 ? value : fallback;
}

TEST(LeaderElectionTest, CallsLocksEphemeralKeysAndWatchesRideThroughLeaderKills) {
  const int kills = EnvInt("REGISTRY_FAULT_KILLS", 1);
  const absl::Duration every = absl::Seconds(EnvInt("REGISTRY_FAULT_KILL_EVERY_SECONDS", 5));
  absl::StatusOr<std::unique_ptr<ConsulCluster>> cluster =
      ConsulCluster::Start({.binary = integration::ConsulBinary(CONSUL_BIN), .servers = 3});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::StatusOr<std::string> history_dir = history::FreshHistoryDir("leader-kills");
  ASSERT_TRUE(history_dir.ok()) << history_dir.status();
  const char* shared_keys = std::getenv("REGISTRY_FAULT_SHARED_KEYS");
  const WorkloadOptions options{
      .servers = (*cluster)->server_list(),
      .instances = EnvInt("REGISTRY_FAULT_INSTANCES", 3),
      .keys_per_instance = EnvInt("REGISTRY_FAULT_KEYS_PER_INSTANCE", 20),
      .shared_keys = shared_keys == nullptr || absl::string_view(shared_keys) != "0",
      .history_dir = *history_dir};
  absl::StatusOr<std::unique_ptr<ClusterWorkload>> load = ClusterWorkload::Start(options);
  ASSERT_TRUE(load.ok()) << load.status();

  const absl::Time load_started = absl::Now();
  std::string elections;
  absl::Duration longest = absl::ZeroDuration();
  for (int kill = 0; kill < kills; ++kill) {
    absl::SleepFor(every);  // the schedule of the faults, while the load runs
    absl::StatusOr<int> leader = (*cluster)->AwaitLeader(absl::Seconds(30));
    ASSERT_TRUE(leader.ok()) << leader.status();
    const absl::Time killed = absl::Now();
    (*cluster)->Kill(*leader);
    absl::StatusOr<int> next = (*cluster)->AwaitLeader(absl::Seconds(60), *leader);
    ASSERT_TRUE(next.ok()) << next.status();
    longest = std::max(longest, absl::Now() - killed);
    absl::StrAppend(&elections, absl::FormatDuration(absl::Now() - killed), " ");
    ASSERT_TRUE((*cluster)->Restart(*leader).ok());
    ASSERT_TRUE((*cluster)->AwaitServing(*leader, absl::Seconds(60)).ok());
  }
  absl::SleepFor(absl::Seconds(3));  // load on the healed cluster
  (*load)->Stop();
  const absl::Duration loaded = absl::Now() - load_started;

  absl::StatusOr<absl::Duration> converged = (*load)->AwaitWatchConverged(absl::Seconds(30));
  absl::Status ephemeral = (*load)->CheckEphemeralKeys();
  WorkloadCounts& counts = (*load)->counts();
  const std::string report = counts.Report();
  std::printf("leader kills: %d, elections took: %s\n%s (%.0f calls/s)\nwatch converged after %s\n",
              kills, elections.c_str(), report.c_str(),
              (counts.writes + counts.reads) / absl::ToDoubleSeconds(loaded),
              converged.ok() ? absl::FormatDuration(*converged).c_str() : "never");
  // Calls ride through an election shorter than the request timeout (10 s); a longer one (a
  // starved machine) may fail calls, and is reported rather than asserted on. A write in flight
  // when the leader dies is answered outcome unknown, and never sent again (the history checker
  // takes it as applied or not): at most one per instance per kill, twice that for a follower
  // that forwards on its pooled connection to the dead leader before it knows.
  if (longest < kLongestElectionRiddenThrough) {
    EXPECT_EQ(counts.failed_writes, 0) << report;
    EXPECT_LE(counts.unknown_writes, 2 * kills * options.instances) << report;
    EXPECT_EQ(counts.failed_reads, 0) << report;
    EXPECT_EQ(counts.failed_locks, 0) << report;
    EXPECT_EQ(counts.sessions_lost, 0) << report;
  } else {
    std::printf("an election took %s: failed calls are not asserted\n",
                absl::FormatDuration(longest).c_str());
  }
  EXPECT_EQ(counts.stale_reads, 0) << report;
  EXPECT_EQ(counts.overlaps, 0) << report;
  EXPECT_GT(counts.writes, 0) << report;
  EXPECT_GT(counts.locks, 0) << report;
  EXPECT_TRUE(converged.ok()) << converged.status();
  EXPECT_TRUE(ephemeral.ok()) << ephemeral;
  EXPECT_EQ(counts.unrecorded, 0) << report;
  if (converged.ok()) {
    EXPECT_TRUE((*load)->RecordWatchEnd().ok());
  }
  history::ExpectHistoryChecked(*history_dir);
  if (::testing::Test::HasFailure()) (*cluster)->KeepFilesAndPrintLogs();
}

}  // namespace
}  // namespace registry::faults
