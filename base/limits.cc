// SPDX-License-Identifier: Apache-2.0
// base/limits.cc
#include "base/limits.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace registry::limits {
namespace {

// OK iff `min` <= `value` <= `max`, where `positive` makes the low bound exclusive of zero.
absl::Status CheckRange(absl::string_view name, absl::Duration value, bool positive,
                        absl::Duration max, absl::string_view max_note = "") {
  const bool too_low = positive ? value <= absl::ZeroDuration() : value < absl::ZeroDuration();
  if (!too_low && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, ": ", absl::FormatDuration(value), " must be ", positive ? "positive" : "at least 0",
      " and at most ", absl::FormatDuration(max), max_note));
}

}  // namespace

absl::Status ValidateNodeName(absl::string_view name) {
  if (name.size() > 63) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is longer than 63 characters"));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name, "' is not a node name (letters, digits, '-', '_', '.')"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateTimings(const Timings& timings, const TimingNames& names) {
  const bool kPositive = true;
  for (absl::Status status : {
           CheckRange(names.session_ttl, timings.session_ttl, kPositive, kMaxSessionTtl),
           CheckRange(names.block_query_wait, timings.block_query_wait, kPositive,
                      kMaxBlockQueryWait),
           CheckRange(names.connect_timeout, timings.connect_timeout, kPositive, kMaxTimeout),
           CheckRange(names.request_timeout, timings.request_timeout, kPositive, kMaxTimeout),
           CheckRange(names.session_lock_delay, timings.session_lock_delay, !kPositive,
                      kMaxLockDelay),
       }) {
    if (!status.ok()) return status;
  }
  if (timings.lock_retry > timings.session_ttl && timings.session_ttl < kMaxLockRetry) {
    return CheckRange(names.lock_retry, timings.lock_retry, kPositive, timings.session_ttl,
                      absl::StrCat(" (", names.session_ttl, ")"));
  }
  return CheckRange(names.lock_retry, timings.lock_retry, kPositive, kMaxLockRetry);
}

}  // namespace registry::limits
