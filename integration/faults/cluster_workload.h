// SPDX-License-Identifier: Apache-2.0
// integration/faults/cluster_workload.h
//
// The load the fault tests put on a real Consul cluster while they kill, restart or pause its
// servers, and what it counts. Each Instance is one repository (its own instance session) that
//  - persists keys /data/<instance>/<n> in a loop and reads each one back,
//  - holds the ephemeral key /online/<instance>,
//  - takes the shared lock "faults" in a loop, checking that no other instance is inside,
// and instance 0 also watches /data, keeping the view its events build.
//
// Failures are counted, never retried by the workload: a failed call is a call the plugin let
// fail. Thread safety: Start/Stop from one thread; counters are atomics; the views are guarded.
#ifndef INTEGRATION_FAULTS_CLUSTER_WORKLOAD_H_
#define INTEGRATION_FAULTS_CLUSTER_WORKLOAD_H_

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lock/lock_manager.h"
#include "registry/repository.h"
#include "repository/consul_repository.h"

namespace registry::faults {

// What the load saw; every failure keeps its first messages for the report.
struct WorkloadCounts {
  std::atomic<int> writes{0}, failed_writes{0};
  std::atomic<int> reads{0}, failed_reads{0}, stale_reads{0};
  std::atomic<int> locks{0}, failed_locks{0}, overlaps{0}, lost_locks{0};
  std::atomic<int> sessions_lost{0};
  absl::Mutex mu;
  std::vector<std::string> first_failures ABSL_GUARDED_BY(mu);

  void Fail(std::atomic<int>& counter, const std::string& what, const absl::Status& status);
  std::string Report();
};

class ClusterWorkload {
 public:
  // `instances` repositories on `servers` (a server-lists value) with `ttl` sessions.
  static absl::StatusOr<std::unique_ptr<ClusterWorkload>> Start(const std::string& servers,
                                                                int instances, absl::Duration ttl);
  ~ClusterWorkload();  // Stop()

  // Stops the loops and joins them (the repositories stay open for checks).
  void Stop();

  // Waits until instance 0's watch view equals the store; returns how long that took, or
  // DeadlineExceeded naming a difference.
  absl::StatusOr<absl::Duration> AwaitWatchConverged(absl::Duration timeout);
  // OK when every instance's ephemeral key exists and is held by that instance's session.
  absl::Status CheckEphemeralKeys();

  WorkloadCounts& counts() { return counts_; }

 private:
  struct Instance {
    std::unique_ptr<ConsulRepository> repository;
    std::unique_ptr<lock::LockManager> locks;
    std::shared_ptr<lock::DistributedLock> lock;
  };

  ClusterWorkload() = default;
  void WriteLoop(int instance);
  void LockLoop(int instance);
  // Every /data key and value as the store has it now.
  absl::StatusOr<std::map<std::string, std::string>> StoreView();

  std::vector<Instance> instances_;
  WorkloadCounts counts_;
  std::atomic<bool> stop_{false};
  std::atomic<int> inside_{0};  // instances inside the lock's critical section
  std::vector<std::thread> threads_;

  absl::Mutex view_mu_;
  std::map<std::string, std::string> watch_view_ ABSL_GUARDED_BY(view_mu_);
};

}  // namespace registry::faults

#endif  // INTEGRATION_FAULTS_CLUSTER_WORKLOAD_H_
