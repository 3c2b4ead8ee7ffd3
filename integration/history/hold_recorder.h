// SPDX-License-Identifier: Apache-2.0
// integration/history/hold_recorder.h
//
// HoldRecorder records one process's holds of one lock in its history: each acquisition under a
// new hold id, its release, and its loss as the lock's lost listener reports it. A loss reported
// before the acquiring call has returned (the hold was lost at once) is recorded right after the
// acquisition, as the checker rejects the loss of a hold it has not seen acquired.
//
//   HoldRecorder holds(recorder, "counter");
//   lock->AddLostListener([&](const std::string&, const absl::Status&) { holds.Lost(); });
//   if (holds.Acquire([&] { return lock->TryLock(absl::Seconds(2)); }).value_or(false)) {
//     ... fenced writes recorded with .hold = holds.hold() ...
//     holds.Release([&] { return lock->Unlock(); });
//   }
//
// Thread safety: Acquire and Release from the thread that takes the lock; Lost and hold() from
// any thread.
#ifndef INTEGRATION_HISTORY_HOLD_RECORDER_H_
#define INTEGRATION_HISTORY_HOLD_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "integration/history/history_recorder.h"

namespace registry::history {

class HoldRecorder {
 public:
  // Records into `recorder` (which must outlive this) the holds of the lock `lock`, of which
  // `capacity` may be held at once (1: a mutex; a semaphore's limit).
  HoldRecorder(HistoryRecorder& recorder, std::string lock, int capacity = 1);

  // Runs `acquire` (a Lock() returning true, or a TryLock()) under a new hold id and records it:
  // ok when it returned true, failed when it returned false or an error (nothing is held).
  // Returns what `acquire` returned.
  absl::StatusOr<bool> Acquire(const std::function<absl::StatusOr<bool>()>& acquire);

  // Runs `release` (the hold's last Unlock) and records it (an error: unknown). Returns what it
  // returned.
  absl::Status Release(const std::function<absl::Status()>& release);

  // The lock's lost listener: records the loss of the current hold (none: nothing to record).
  void Lost();

  // The current hold's id, for the fenced writes made under it; "" when nothing is held.
  std::string hold();

  // Lines that could not be written to the history (a full disk): a test should expect 0.
  int unrecorded() const { return unrecorded_.load(); }

 private:
  void RecordLost(int64_t when) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Record(HistoryEntry& entry);

  HistoryRecorder& recorder_;
  const std::string lock_;
  const int capacity_;
  std::atomic<int> unrecorded_{0};
  absl::Mutex mu_;
  std::string hold_ ABSL_GUARDED_BY(mu_);  // being acquired or held; "" between holds
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<int64_t> lost_before_held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::history

#endif  // INTEGRATION_HISTORY_HOLD_RECORDER_H_
