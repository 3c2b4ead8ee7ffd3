// SPDX-License-Identifier: Apache-2.0
#include "devserver/faults.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"

namespace registry::devserver {

void FaultInjector::SetLatency(absl::Duration latency) {
  absl::MutexLock lock(&mu_);
  latency_ = std::max(latency, absl::ZeroDuration());
}

absl::Duration FaultInjector::latency() const {
  absl::MutexLock lock(&mu_);
  return latency_;
}

void FaultInjector::FailNextRequests(int count) {
  absl::MutexLock lock(&mu_);
  failures_left_ = std::max(count, 0);
}

bool FaultInjector::ConsumeFailure() {
  absl::MutexLock lock(&mu_);
  if (failures_left_ == 0) return false;
  --failures_left_;
  return true;
}

void FaultInjector::DropNextConnections(int count) {
  absl::MutexLock lock(&mu_);
  drops_left_ = std::max(count, 0);
}

bool FaultInjector::ConsumeDrop() {
  absl::MutexLock lock(&mu_);
  if (drops_left_ == 0) return false;
  --drops_left_;
  return true;
}

void FaultInjector::DropNextReplies(int count, std::string path_prefix, std::string method) {
  absl::MutexLock lock(&mu_);
  reply_drops_left_ = std::max(count, 0);
  reply_drop_prefix_ = std::move(path_prefix);
  reply_drop_method_ = std::move(method);
  reply_fault_ = ReplyFault::kDrop;
}

void FaultInjector::FailNextRepliesAfterApplying(int count, std::string path_prefix,
                                                 std::string method) {
  DropNextReplies(count, std::move(path_prefix), std::move(method));
  absl::MutexLock lock(&mu_);
  reply_fault_ = ReplyFault::kServerError;
}

FaultInjector::ReplyFault FaultInjector::ConsumeReplyFault(absl::string_view method,
                                                           absl::string_view path) {
  absl::MutexLock lock(&mu_);
  if (reply_drops_left_ == 0 || !absl::StartsWith(path, reply_drop_prefix_) ||
      (!reply_drop_method_.empty() && method != reply_drop_method_)) {
    return ReplyFault::kNone;
  }
  --reply_drops_left_;
  return reply_fault_;
}

void FaultInjector::Clear() {
  absl::MutexLock lock(&mu_);
  latency_ = absl::ZeroDuration();
  failures_left_ = 0;
  drops_left_ = 0;
  reply_drops_left_ = 0;
  reply_drop_prefix_.clear();
  reply_drop_method_.clear();
}

void RequestStats::Count(absl::string_view endpoint) {
  absl::MutexLock lock(&mu_);
  auto it = counts_.find(endpoint);
  if (it == counts_.end()) it = counts_.emplace(std::string(endpoint), 0).first;
  ++it->second;
}

std::map<std::string, uint64_t> RequestStats::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return std::map<std::string, uint64_t>(counts_.begin(), counts_.end());
}

void RequestStats::Reset() {
  absl::MutexLock lock(&mu_);
  counts_.clear();
}

}  // namespace registry::devserver
