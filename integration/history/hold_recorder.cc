// SPDX-License-Identifier: Apache-2.0
#include "integration/history/hold_recorder.h"

#include <utility>

namespace registry::history {

HoldRecorder::HoldRecorder(HistoryRecorder& recorder, std::string lock, int capacity)
    : recorder_(recorder), lock_(std::move(lock)), capacity_(capacity) {}

absl::StatusOr<bool> HoldRecorder::Acquire(const std::function<absl::StatusOr<bool>()>& acquire) {
  HistoryEntry entry{.op = "lock_acquire", .lock = lock_, .capacity = capacity_};
  entry.hold = recorder_.NewHoldId();
  {
    absl::MutexLock guard(&mu_);
    hold_ = entry.hold;
    held_ = false;
    lost_before_held_.reset();
  }
  absl::StatusOr<bool> acquired = TimeCall(entry, acquire);
  // An error holds nothing either: a failed acquire releases whatever it may have taken
  // (lock/README.md, "Deadlines"), so the README's format records it failed, as a false.
  if (!acquired.ok() || !*acquired) {
    entry.outcome = Outcome::kFailed;
    entry.error = acquired.ok() ? "not acquired" : std::string(acquired.status().message());
  }
  Record(entry);
  absl::MutexLock guard(&mu_);
  if (entry.outcome != Outcome::kOk) {
    hold_.clear();
    return acquired;
  }
  held_ = true;
  if (lost_before_held_.has_value()) RecordLost(*std::exchange(lost_before_held_, std::nullopt));
  return acquired;
}

absl::Status HoldRecorder::Release(const std::function<absl::Status()>& release) {
  HistoryEntry entry{.op = "lock_release", .lock = lock_};
  {
    absl::MutexLock guard(&mu_);
    entry.hold = std::exchange(hold_, "");
    held_ = false;
  }
  absl::Status released = TimeCall(entry, release);
  SetOutcome(entry, released);
  if (!released.ok()) entry.outcome = Outcome::kUnknown;  // it may have freed the lock
  Record(entry);
  return released;
}

void HoldRecorder::Lost() {
  const int64_t now = HostMonotonicNanos();
  absl::MutexLock guard(&mu_);
  if (hold_.empty()) return;  // between holds: a release ended the last one first
  if (!held_) {
    lost_before_held_ = now;
    return;
  }
  RecordLost(now);
}

std::string HoldRecorder::hold() {
  absl::MutexLock guard(&mu_);
  return held_ ? hold_ : "";
}

void HoldRecorder::RecordLost(int64_t when) {
  HistoryEntry entry{.op = "lock_lost", .lock = lock_, .hold = hold_};
  entry.call = entry.ret = when;
  Record(entry);
}

void HoldRecorder::Record(HistoryEntry& entry) {
  if (!recorder_.Record(entry).ok()) ++unrecorded_;
}

}  // namespace registry::history
