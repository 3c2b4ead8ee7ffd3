// SPDX-License-Identifier: Apache-2.0
// integration/faults/cluster_workload.h
//
// The load the fault tests put on a real Consul cluster while they kill, restart or pause its
// servers, and what it counts. Each Instance is one repository (its own instance session) that
//  - persists keys /data/<instance>/<n> (n < keys_per_instance) in a loop and reads each back,
//  - holds the ephemeral key /online/<instance>,
//  - takes the shared lock "faults" in a loop, checking that no other instance is inside,
//  - with shared_keys, writes, updates, deletes and reads the keys /data/shared/<n> (as many as
//    instances, at least 5), which every instance writes in turn,
// and instance 0 also watches /data, keeping the view its events build.
//
// Every call is recorded in a history (integration/history/README.md): one file per instance and
// one for the watcher, in the directory Start() is given; RecordWatchEnd() closes the watcher's
// record once the view has converged, and the test runs the checker over the directory.
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
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "instance/instance.h"
#include "integration/history/history_recorder.h"
#include "integration/history/hold_recorder.h"
#include "lock/lock_manager.h"
#include "registry/repository.h"

namespace registry::faults {

// What the load saw; every failure keeps its first messages for the report.
struct WorkloadCounts {
  // A write whose reply was lost (consul::IsUnknownOutcome) is not sent again by the plugin: it
  // counts as unknown_writes, not as failed_writes, and the history checker allows both outcomes.
  std::atomic<int> writes{0}, failed_writes{0}, unknown_writes{0};
  std::atomic<int> reads{0}, failed_reads{0}, stale_reads{0};
  std::atomic<int> locks{0}, failed_locks{0}, overlaps{0}, lost_locks{0};
  std::atomic<int> sessions_lost{0};
  std::atomic<int> unrecorded{0};  // calls the history could not record
  absl::Mutex mu;
  std::vector<std::string> first_failures ABSL_GUARDED_BY(mu);

  void Fail(std::atomic<int>& counter, const std::string& what, const absl::Status& status);
  // Fail() on unknown_writes or failed_writes, as `status` says.
  void FailWrite(const std::string& what, const absl::Status& status);
  std::string Report();
};

struct WorkloadOptions {
  std::string servers{};  // a server-lists value
  int instances = 3;
  int keys_per_instance = 20;
  // Also the shared keys, which several instances write (a write of one whose reply was lost is
  // never sent again, so their histories stay linearizable: integration/history/README.md).
  bool shared_keys = true;
  absl::Duration ttl = absl::Seconds(10);  // of the instance sessions
  std::string history_dir{};               // where the calls are recorded (an existing directory)
};

class ClusterWorkload {
 public:
  static absl::StatusOr<std::unique_ptr<ClusterWorkload>> Start(const WorkloadOptions& options);
  ~ClusterWorkload();  // Stop()

  // Stops the loops and joins them (the repositories stay open for checks).
  void Stop();

  // Waits until instance 0's watch view equals the store; returns how long that took, or
  // DeadlineExceeded naming a difference.
  absl::StatusOr<absl::Duration> AwaitWatchConverged(absl::Duration timeout);
  // OK when every instance's ephemeral key exists and is held by that instance's session.
  absl::Status CheckEphemeralKeys();
  // Records that the watcher's view has converged (after AwaitWatchConverged succeeded): the
  // checker compares its final view with the store's.
  absl::Status RecordWatchEnd();

  WorkloadCounts& counts() { return counts_; }

 private:
  struct Instance {
    // Declared before what calls into them (the lock's lost listener), destroyed after it.
    std::unique_ptr<history::HistoryRecorder> recorder;
    std::unique_ptr<history::HoldRecorder> holds;  // of `lock`, into `recorder`
    std::unique_ptr<ConsulRepository> repository;
    std::unique_ptr<lock::LockManager> locks;
    std::shared_ptr<lock::DistributedLock> lock;
  };

  explicit ClusterWorkload(WorkloadOptions options) : options_(std::move(options)) {}
  absl::Status AddInstance();
  std::string DataKey(int instance, int n) const;
  void WriteLoop(int instance);
  // Round `n` of instance `index` on the shared keys: a put, a read, now and then an update or
  // a delete.
  void WriteShared(int index, int n);
  void LockLoop(int instance);
  // A Get of `key` by `instance`, recorded and counted.
  absl::StatusOr<std::optional<std::string>> RecordedGet(Instance& instance,
                                                         const std::string& key);
  // Records `entry` (its outcome from `status`) in `instance`'s history; a failure to record
  // is counted as a failed write.
  void Record(Instance& instance, history::HistoryEntry& entry, const absl::Status& status);
  void OnWatchEvent(const DataChangedEvent& event);
  // Every /data key and value as the store has it now.
  absl::StatusOr<std::map<std::string, std::string>> StoreView();

  const WorkloadOptions options_;
  std::vector<std::unique_ptr<Instance>> instances_;
  std::unique_ptr<history::HistoryRecorder> watch_recorder_;
  WorkloadCounts counts_;
  std::atomic<bool> stop_{false};
  std::atomic<int> inside_{0};  // instances inside the lock's critical section
  std::vector<std::thread> threads_;

  absl::Mutex view_mu_;
  std::map<std::string, std::string> watch_view_ ABSL_GUARDED_BY(view_mu_);
};

}  // namespace registry::faults

#endif  // INTEGRATION_FAULTS_CLUSTER_WORKLOAD_H_
