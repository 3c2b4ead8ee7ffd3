// SPDX-License-Identifier: Apache-2.0
// base/backoff.h
//
// The one jittered exponential back-off of the project: the n-th delay after n failures in a row
// is drawn uniformly from [d/2, d], where d = min(first * 2^(n-1), max). Half of every delay is
// jitter, so instances that failed together do not retry together, and no retry is immediate.
//
// Thread safety: BackoffDelay is; a Backoff is used by one thread at a time.
#ifndef BASE_BACKOFF_H_
#define BASE_BACKOFF_H_

#include <algorithm>

#include "absl/random/bit_gen_ref.h"
#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/time/time.h"

namespace registry {

// The delay after `failures` (>= 1) failures in a row; see above.
inline absl::Duration BackoffDelay(absl::Duration first, absl::Duration max, int failures,
                                   absl::BitGenRef gen) {
  absl::Duration delay = std::min(first, max);
  for (int i = 1; i < failures && delay < max; ++i) delay *= 2;
  delay = std::min(delay, max);
  return delay / 2 + absl::Uniform(gen, 0.0, 1.0) * (delay / 2);
}

// Counts failures in a row and draws the next delay.
class Backoff {
 public:
  Backoff(absl::Duration first, absl::Duration max) : first_(first), max_(max) {}

  // The delay before the next attempt, after one more failure.
  absl::Duration Next() { return BackoffDelay(first_, max_, ++failures_, gen_); }
  // A success: the next failure starts from `first` again.
  void Reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  const absl::Duration first_;
  const absl::Duration max_;
  int failures_ = 0;
  absl::BitGen gen_;
};

}  // namespace registry

#endif  // BASE_BACKOFF_H_
