// SPDX-License-Identifier: Apache-2.0
// integration/partition/fenced_counter.h
//
// The fenced counter of the partition tests: FencedWriter is an in-process repository in one lab
// node (on a NamespaceThread, as AppInstance) that loops: take the mutex "fenced", read
// /fenced/counter, keep the lock a moment, write the value + 1 with PersistIfHeld (one Consul
// transaction that checks the hold on the lock key), unlock. Unlike critical_section.sh's plain
// put, such a write can never land after the hold ended: Consul refuses it, however late it
// arrives. CheckFencedCounter then proves that no increment was lost.
//
// Every lock, read, fenced write and unlock is recorded in a history (integration/history) under
// the writer's name, with its losses, so the checker judges the holds and the counter's key too.
//
// A test can make one writer a stale holder: StallNextHold makes its next hold wait before
// writing until the test says, so a fault that costs it the lock meanwhile leaves it writing after
// someone else took over; that write must be refused.
//
// Thread safety: every method may be called from any thread; CheckFencedCounter is pure.
#ifndef INTEGRATION_PARTITION_FENCED_COUNTER_H_
#define INTEGRATION_PARTITION_FENCED_COUNTER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "instance/instance.h"
#include "integration/history/history_recorder.h"
#include "integration/history/hold_recorder.h"
#include "integration/partition/network_lab.h"
#include "lock/lock_manager.h"

namespace registry::partition {

inline constexpr char kFencedCounterKey[] = "/fenced/counter";

// One fenced write and what came of it.
struct FencedAttempt {
  std::string writer;  // the node's name
  int64_t value = 0;   // what it tried to write
  absl::Status status;
  bool stalled = false;  // the write of a StallNextHold hold
};

class FencedWriter {
 public:
  // Starts the loop in the namespace at `netns_path`, recording into `history_dir` (an existing
  // directory) as process `name`. Errors: the namespace thread's; the history file's.
  static absl::StatusOr<std::unique_ptr<FencedWriter>> Start(std::string name,
                                                             const std::string& netns_path,
                                                             ConsulRepositoryOptions options,
                                                             const std::string& history_dir);
  ~FencedWriter();  // Stop()
  FencedWriter(const FencedWriter&) = delete;
  FencedWriter& operator=(const FencedWriter&) = delete;

  // Makes the next hold wait, before its write, until EndStallAt's time; returns once the writer
  // holds the lock in that wait, false if it got no hold within `patience`.
  bool StallNextHold(absl::Duration patience);
  // The stalled hold writes at `when` (if the writer is not stopped first).
  void EndStallAt(absl::Time when);

  // Ends the loop (a stall in progress ends without its write), then closes the repository.
  void Stop();

  std::vector<FencedAttempt> Attempts();
  // Lines its history could not record (a full disk): a test expects 0.
  int unrecorded() const { return unrecorded_.load() + holds_->unrecorded(); }

 private:
  FencedWriter(std::string name, ConsulRepositoryOptions options)
      : name_(std::move(name)), options_(std::move(options)) {}
  void Loop();
  // One lock, read, write, unlock.
  void Round(Repository& repository, lock::DistributedLock& lock);
  // Records a call's entry with `status`'s outcome.
  void Record(history::HistoryEntry& entry, const absl::Status& status);
  // Waits in a stall until its end or a stop; true if the stalled write is to be made.
  bool AwaitStallEnd();

  const std::string name_;
  const ConsulRepositoryOptions options_;
  std::unique_ptr<history::HistoryRecorder> recorder_;
  std::unique_ptr<history::HoldRecorder> holds_;  // of the lock, into recorder_
  std::unique_ptr<NamespaceThread> thread_;
  std::thread driver_;  // runs Loop() as one long task of thread_
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool stall_next_ ABSL_GUARDED_BY(mu_) = false;  // the next hold stalls
  bool stalling_ ABSL_GUARDED_BY(mu_) = false;    // a hold waits in the stall
  absl::Time stall_end_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::vector<FencedAttempt> attempts_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> unrecorded_{0};
};

struct FencedFigures {
  int acknowledged = 0;             // writes that succeeded
  int refused = 0;                  // writes refused because the hold had ended (or never was)
  int unknown = 0;                  // writes whose outcome the writer never learnt
  std::vector<std::string> errors;  // every violation, readable
};

// Checks the attempts of every writer against the counter's final value (the counter started
// absent, read as 0): no value was acknowledged twice (two holders read the same value: a lost
// increment), none exceeds the final value, and the final value is covered by the acknowledged
// writes plus those of unknown outcome.
FencedFigures CheckFencedCounter(const std::vector<FencedAttempt>& attempts, int64_t final_counter);

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_FENCED_COUNTER_H_
