// SPDX-License-Identifier: Apache-2.0
// integration/partition/lock_workers.h
//
// LockWorkers: one loop per lab node, each running
//   ip netns exec <node> registryctl --config=CONFIG lock NAME --timeout-ms=T --
//       /bin/sh critical_section.sh LOG registryctl CONFIG TAG PAUSE_BEFORE 0
// again and again, so that several processes on several machines contend for one distributed
// lock while the network fails. critical_section.sh (integration/lock_safety) increments the
// counter /safety/counter non-atomically with `registryctl get` / `put` (run in the same
// namespace: they are its children) and appends its steps to LOG with CLOCK_REALTIME
// timestamps: one host clock for every namespace, which is what makes section_log.h's overlap
// check meaningful across machines.
//
// Tags are "<node name>i<iteration>" with an "L" suffix on every third iteration: those pause
// `long_pause` between their read and their write (so a fault injected while one runs cuts a
// holder in the middle of its section), the others `short_pause`.
//
// A loop ends after the iteration running when Stop() is called; an iteration that failed is
// followed by `retry_pause` before the next (a cut-off node would otherwise spin).
//
// Thread safety: Start/Stop from one thread; the other methods from any thread.
#ifndef INTEGRATION_PARTITION_LOCK_WORKERS_H_
#define INTEGRATION_PARTITION_LOCK_WORKERS_H_

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "integration/lock_safety/section_log.h"
#include "integration/partition/network_lab.h"

namespace registry::partition {

struct LockWorkersOptions {
  std::string registryctl;       // binary
  std::string critical_section;  // critical_section.sh
  std::string config;            // registry YAML of every process
  std::string log;               // the section log (created empty by Start)
  std::string lock_name = "safety";
  // Run before registryctl (its arguments follow), e.g. {"env", "LD_PRELOAD=...",
  // "REGISTRY_CLOCK_RATE=0.9"} for a clock-rate fault; empty: none. critical_section.sh undoes
  // that for its own steps.
  std::vector<std::string> command_prefix{};
  absl::Duration long_pause = absl::Milliseconds(1500);
  absl::Duration short_pause = absl::Milliseconds(50);
  absl::Duration lock_timeout = absl::Seconds(25);  // --timeout-ms
  absl::Duration retry_pause = absl::Milliseconds(300);
};

// One `registryctl lock` run.
struct Iteration {
  std::string tag;
  int node = -1;
  int exit_code = -1;  // -1: killed at the harness's own deadline
  absl::Time began;    // before the process was started
  absl::Time ended;    // after it was reaped
  std::string err;     // its stderr (registryctl's and the section's)
};

// A section as the log shows it while the loops run.
struct RunningSection {
  std::string tag;
  int node = -1;
  absl::Time started;
};

class LockWorkers {
 public:
  // `lab` must outlive the workers.
  LockWorkers(const NetworkLab& lab, std::vector<int> nodes, LockWorkersOptions options);
  ~LockWorkers();  // Stop()
  LockWorkers(const LockWorkers&) = delete;
  LockWorkers& operator=(const LockWorkers&) = delete;

  void Start();
  // Lets every loop finish its current iteration and joins them.
  void Stop();

  // Waits at most `timeout` for a section that has started and not stopped, and whose tag is
  // a long one when `long_only`; nullopt if none came.
  std::optional<RunningSection> AwaitRunning(absl::Duration timeout, bool long_only);
  // Waits at most `timeout` until every node of `nodes` has an iteration that began at or after
  // `since` and succeeded; false if not.
  bool AwaitSuccessEverywhere(const std::vector<int>& nodes, absl::Time since,
                              absl::Duration timeout);
  // How many iterations have succeeded so far.
  int succeeded();

  // Every finished iteration, in the order they ended.
  std::vector<Iteration> Iterations();
  // After Stop(): every iteration's section, with the steps the log holds. Errors: as ApplyLog.
  absl::StatusOr<std::vector<integration::Section>> Sections();
  // The node that ran the section `tag`; -1 if unknown.
  int NodeOf(const std::string& tag);

 private:
  void Loop(int node);
  // (tag -> steps) of the log as it is now.
  std::map<std::string, integration::Section> ReadLog();

  const NetworkLab& lab_;
  const std::vector<int> nodes_;
  const LockWorkersOptions options_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  std::map<std::string, int> node_of_ ABSL_GUARDED_BY(mu_);  // every tag started, -> node
  std::vector<Iteration> done_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_LOCK_WORKERS_H_
