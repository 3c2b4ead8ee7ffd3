// SPDX-License-Identifier: Apache-2.0
// integration/partition/partition_fixture.h
//
// The fixture of the partition tests: a NetworkLab (network_lab.h) with nine nodes
//   s0 s1 s2      a 3-server real Consul cluster (lab_consul.h)
//   c0 c1 c2 c3   a `registryctl lock` loop each (lock_workers.h) and a long-lived
//                 `registryctl ephemeral /online/<node> up` process each
//   app           an in-process repository (app_instance.h): ephemeral /online/app, watches
//                 /online and /safety
// and, on c0..c3 and app, a FencedWriter each (fenced_counter.h): in-process repositories
// incrementing /fenced/counter under the lock "fenced" with fenced writes.
//   obs           the test's own probe (HTTP from a NamespaceThread): never cut off
// Every instance uses session TTL 3 s and lock-delay 3 s (kTtl, kLockDelay), request timeout
// 4 s, connect timeout 500 ms.
//
// Two topologies (Topology): in kServers (PartitionTest) the instances talk to the three servers
// (`server-lists` names them all) and their sessions belong to the plugin's own catalog node
// (`sessionNode` default); in kClientAgents (ClientAgentPartitionTest) every instance node (c0..c3,
// app) also runs a Consul client agent (lab_client_agents.h) and the instances talk to it alone
// (`server-lists: 127.0.0.1:8500`, `sessionNode: ""`: their sessions belong to the agent's node,
// as those of Consul's own tools do). A fault that cuts an instance node cuts its agent with it;
// after the heal such a node reaches the servers again only once its agent is back in serf
// (FaultRecord::cut_back).
//
// SetUp starts it all and waits until the lock has changed hands a few times. A test then
// injects its fault, records it in a FaultRecord and calls HealAndCheck(), which heals, waits
// for the cluster to be whole and for every lock node to succeed again, stops the workers and
// checks (failures are test failures; figures are printed):
//   - no two critical sections overlapped unless the earlier holder was told first, and the
//     counter lost no increment (partition_checks.h);
//   - the fenced counter lost no increment, whatever landed late (fenced_counter.h);
//   - every live instance's ephemeral key is back (a consistent read), held by a session;
//   - the app's watch view equals a consistent read of /online and /safety;
//   - every failed `registryctl lock` run was one the fault explains, the app saw LOST only if
//     it was cut off or sessions were at risk (partition_checks.h: a slow election, during the
//     fault or caused by its heal), and every ephemeral process is still running.
// The faults themselves are the fixture's Fault* methods (partition_faults.cc), so that each
// topology runs the same ones.
//
// Thread safety: gtest's: one test thread.
#ifndef INTEGRATION_PARTITION_PARTITION_FIXTURE_H_
#define INTEGRATION_PARTITION_PARTITION_FIXTURE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "integration/partition/app_instance.h"
#include "integration/partition/fenced_counter.h"
#include "integration/partition/lab_client_agents.h"
#include "integration/partition/lab_consul.h"
#include "integration/partition/lock_workers.h"
#include "integration/partition/network_lab.h"
#include "integration/partition/partition_checks.h"
#include "integration/testing/subprocess.h"

namespace registry::partition {

inline constexpr absl::Duration kTtl = absl::Seconds(3);
// The session keeper's renewal retry pace for kTtl (ttl / 10, clamped to [50 ms, 1 s]: the
// upper bound of repository/session_keeper.cc's RenewRetryDelayLocked).
inline constexpr absl::Duration kRenewRetry = absl::Milliseconds(300);  // kTtl / 10
inline constexpr absl::Duration kLockDelay = absl::Seconds(3);
inline constexpr absl::Duration kRequestTimeout = absl::Seconds(4);
// Consul expires a session 2 x TTL after its last renewal; its locks stay locked for the
// lock-delay after that.
inline constexpr absl::Duration kTakeOver = absl::Seconds(2 * 3 + 3);  // 2 x kTtl + kLockDelay

// Where the instances send their requests (see above).
enum class Topology { kServers, kClientAgents };

// Time for the cluster, the locks and the instances to come back once healed. A server that
// was cut off usually rejoins within 4 s; one cut off long enough for autopilot to remove it
// comes back with serf's reconnect, 30 to 45 s after the heal.
inline constexpr absl::Duration kRecovery = absl::Seconds(90);
// The pace of every bounded wait.
inline constexpr absl::Duration kPoll = absl::Milliseconds(50);

// "1234 ms", for the figures.
std::string Ms(absl::Duration d);

class PartitionTest : public ::testing::Test {
 protected:
  explicit PartitionTest(Topology topology = Topology::kServers) : topology_(topology) {}

  // Lab nodes.
  static constexpr int kServers[] = {0, 1, 2};
  static constexpr int kWorkers[] = {3, 4, 5, 6};
  static constexpr int kApp = 7;
  static constexpr int kObserver = 8;

  void SetUp() override;
  void TearDown() override;

  // A section running now on a lock node (a long one, so that it outlasts the fault's
  // injection); fails the test and returns nullopt if none started within 30 s.
  std::optional<RunningSection> AwaitLongSection();
  // The lab node of Consul server `i`.
  int server(int i) const { return kServers[i]; }
  // Every worker node but `except`.
  std::vector<int> WorkersBut(int except) const;

  // What HealAndCheck saw, for a test's own checks.
  struct Outcome {
    std::vector<integration::Section> sections;
    std::vector<Iteration> runs;
    Handover handover;  // of fault.holder_tag, when set
    std::vector<FencedAttempt> fenced;
  };
  // Heals every fault (fault.healed is set here unless the test set it) and checks; see above.
  Outcome HealAndCheck(FaultRecord& fault);

  // The faults (partition_faults.cc), each injected, held, healed and checked.
  void FaultLeaderCutOffFromItsFollowers();
  void FaultLockHolderIsolatedPastTheTakeOver();
  void FaultSplitOfTheLeaderAndHalfTheClients();
  void FaultMinoritySplitOfTheHolderWithOneFollower();
  void FaultPacketLossOnTheLeader();
  // kClientAgents only: the agent of the lock holder's node killed past the take-over, then
  // restarted on its data dir.
  void FaultClientAgentOfTheHolderKilled();

  // kClientAgents, for a fault that cuts a Consul server off from the majority side's
  // instances: counts every instance node as cut (see partition_faults.cc), waits (bounded)
  // until a section of a node other than `other_than` (-1: any) starts, and returns how long
  // after the fault began that was, plus a second. Zero in kServers.
  absl::Duration CutEveryAgentUntilTheLockMovesOn(int other_than, FaultRecord& fault);

  const Topology topology_;
  // Put before every lock worker's registryctl (LockWorkersOptions::command_prefix); a derived
  // fixture sets it in its constructor, e.g. to run the lock clients under libfaketime.
  std::vector<std::string> lock_client_prefix_;

  std::unique_ptr<NetworkLab> lab_;
  std::unique_ptr<NamespaceThread> probe_;  // in kObserver
  std::unique_ptr<LabConsul> consul_;
  std::unique_ptr<LabClientAgents> agents_;                           // kClientAgents only
  std::vector<std::unique_ptr<integration::Subprocess>> ephemerals_;  // one per worker node
  std::unique_ptr<AppInstance> app_;
  // Node -> its fenced writer (every worker node and the app's).
  std::map<int, std::unique_ptr<FencedWriter>> fenced_;
  std::unique_ptr<LockWorkers> workers_;
  std::string history_dir_;  // the run's history (integration/history): fenced writers, sections
  // What puts the sections' CLOCK_REALTIME times on the history's CLOCK_MONOTONIC.
  int64_t realtime_to_monotonic_ns_ = 0;
  std::string config_;           // the registry YAML of every instance's registryctl
  std::string observer_config_;  // the same, naming the servers: for the observer's registryctl

  // Repository key -> value under `prefix`, read with ?consistent; with `held`, only keys
  // bound to a session.
  absl::StatusOr<std::map<std::string, std::string>> ConsistentRead(const std::string& prefix,
                                                                    bool held = false);

 private:
  // The instances' `server-lists`.
  std::string InstanceServers() const;
  // Writes config_ and observer_config_.
  void WriteConfigs();
  // `registryctl --config=... ARGS` in the observer's namespace; its stdout, or the failure.
  absl::StatusOr<std::string> Ctl(const std::vector<std::string>& args);
  // Stops the fenced writers and checks their counter; returns their attempts.
  std::vector<FencedAttempt> CheckFencedCounter();
  // Adds the sections' holds to the run's history and has the history checker judge it all.
  void CheckHistory(const std::vector<integration::Section>& sections);
  void CheckEphemeralKeysBack();
  void CheckWatchConverged();
  void CheckInstances(const FaultRecord& fault);
  // kClientAgents: waits until the agent of every cut node is back in serf; sets fault.cut_back.
  void AwaitCutAgentsBack(FaultRecord& fault);
};

// The same fixture in the client-agent topology.
class ClientAgentPartitionTest : public PartitionTest {
 protected:
  ClientAgentPartitionTest() : PartitionTest(Topology::kClientAgents) {}
};

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_PARTITION_FIXTURE_H_
