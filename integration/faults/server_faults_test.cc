// SPDX-License-Identifier: Apache-2.0
// integration/faults/server_faults_test.cc
//
// Faults of a single real Consul server (not -dev: its state is on disk), under the load of
// cluster_workload.h:
//  - killed with SIGKILL and restarted on its data dir: afterwards every ephemeral key of a live
//    instance is back, the watch view equals the store, and no two lock holders overlapped;
//  - paused (SIGSTOP) for longer than twice the session TTL and resumed: the instance goes
//    SUSPENDED, then LOST (it cannot know the session survived), then RECONNECTED with a new
//    session that holds its ephemeral key again; a held lock is reported lost; nothing hangs.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/faults/cluster_workload.h"
#include "integration/history/history_check.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/consul_cluster.h"
#include "integration/testing/state_recorder.h"
#include "lock/lock_manager.h"

namespace registry::faults {
namespace {

using integration::ConsulCluster;

std::unique_ptr<ConsulCluster> StartSingleServer() {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> cluster =
      ConsulCluster::Start({.binary = integration::ConsulBinary(CONSUL_BIN), .servers = 1});
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *std::move(cluster) : nullptr;
}

TEST(ServerCrashTest, KilledAndRestartedServerLosesNoEphemeralKeyNorWatchStateNorLockSafety) {
  std::unique_ptr<ConsulCluster> server = StartSingleServer();
  ASSERT_NE(server, nullptr);
  absl::StatusOr<std::string> history_dir = history::FreshHistoryDir("server-crash");
  ASSERT_TRUE(history_dir.ok()) << history_dir.status();
  absl::StatusOr<std::unique_ptr<ClusterWorkload>> load =
      ClusterWorkload::Start({.servers = server->server_list(), .history_dir = *history_dir});
  ASSERT_TRUE(load.ok()) << load.status();
  absl::SleepFor(absl::Seconds(2));  // load before the crash
  const absl::Time killed = absl::Now();
  server->Kill(0);
  ASSERT_TRUE(server->Restart(0).ok());
  ASSERT_TRUE(server->AwaitServing(0, absl::Seconds(60)).ok());
  const absl::Duration down = absl::Now() - killed;
  absl::SleepFor(absl::Seconds(3));  // load after it
  (*load)->Stop();

  absl::StatusOr<absl::Duration> converged = (*load)->AwaitWatchConverged(absl::Seconds(30));
  absl::Status ephemeral = (*load)->CheckEphemeralKeys();
  WorkloadCounts& counts = (*load)->counts();
  const std::string report = counts.Report();
  std::printf("server down for %s\n%s\nwatch converged after %s\n",
              absl::FormatDuration(down).c_str(), report.c_str(),
              converged.ok() ? absl::FormatDuration(*converged).c_str() : "never");
  EXPECT_TRUE(ephemeral.ok()) << ephemeral;
  EXPECT_TRUE(converged.ok()) << converged.status();
  EXPECT_EQ(counts.overlaps, 0) << report;
  EXPECT_EQ(counts.stale_reads, 0) << report;
  EXPECT_GT(counts.writes, 0) << report;
  EXPECT_EQ(counts.unrecorded, 0) << report;
  // After the restart the server answers default reads from the state it is still rebuilding
  // from its log; the watch re-lists with consistent reads (watch/query_machine.h, rules 4 and 5),
  // so its listener is never told an older value again after a newer one.
  if (converged.ok()) {
    EXPECT_TRUE((*load)->RecordWatchEnd().ok());
  }
  history::ExpectHistoryChecked(*history_dir);
  if (::testing::Test::HasFailure()) server->KeepFilesAndPrintLogs();
}

TEST(ServerPauseTest, ServerPausedForTwoTtlsMeansSuspendedLostReconnectedAndTheLockLost) {
  std::unique_ptr<ConsulCluster> server = StartSingleServer();
  ASSERT_NE(server, nullptr);
  ConsulRepositoryOptions options;
  options.client.servers = server->server_list();
  options.client.request_timeout = absl::Seconds(1);
  options.namespace_name = "pause";
  options.session_ttl = absl::Seconds(2);
  options.session_lock_delay = absl::ZeroDuration();
  absl::StatusOr<ConsulInstance> instance = NewConsulInstance(options);
  ASSERT_TRUE(instance.ok()) << instance.status();
  ConsulRepository& repository = *instance->repository;
  testing::StateRecorder states;  // outlives the repository that calls it
  repository.AddConnectionListener(states.Listener());
  ASSERT_TRUE(repository.PersistEphemeral("/online/me", "up").ok());
  absl::StatusOr<std::unique_ptr<lock::LockManager>> locks =
      lock::LockManager::Create(instance->locks);
  ASSERT_TRUE(locks.ok()) << locks.status();
  absl::StatusOr<std::shared_ptr<lock::DistributedLock>> lock = (*locks)->GetLock("held");
  ASSERT_TRUE(lock.ok()) << lock.status();
  absl::Notification lost;
  (*lock)->AddLostListener([&lost](const std::string&, const absl::Status&) { lost.Notify(); });
  ASSERT_TRUE((*lock)->Lock().ok());

  server->Pause(0);
  EXPECT_TRUE(states.AwaitSequence({ConnectionState::kSuspended, ConnectionState::kLost},
                                   absl::Seconds(20)))
      << testing::StatesToString(states.states());
  EXPECT_TRUE(lost.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::SleepFor(absl::Seconds(2));  // paused for more than 2 x TTL in all
  server->Resume(0);
  EXPECT_TRUE(states.AwaitSequence(
      {ConnectionState::kSuspended, ConnectionState::kLost, ConnectionState::kReconnected},
      absl::Seconds(30)))
      << testing::StatesToString(states.states());
  absl::StatusOr<std::optional<std::string>> online = repository.Get("/online/me");
  ASSERT_TRUE(online.ok()) << online.status();
  EXPECT_EQ(*online, "up") << "restored under the new session";
  EXPECT_TRUE((*lock)->Unlock().ok());  // a lost hold ends locally
  const absl::Time closing = absl::Now();
  lock->reset();
  locks->reset();
  EXPECT_TRUE(repository.Close().ok());
  EXPECT_LT(absl::Now() - closing, absl::Seconds(5)) << "close must not hang";
}

}  // namespace
}  // namespace registry::faults
