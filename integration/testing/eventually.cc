// SPDX-License-Identifier: Apache-2.0
// integration/testing/eventually.cc
#include "integration/testing/eventually.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace registry::testing {

bool Eventually(const std::function<bool()>& condition, absl::Duration timeout,
                absl::Duration every) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= deadline) return condition();
    absl::SleepFor(std::min(every, deadline - absl::Now()));
  }
  return true;
}

}  // namespace registry::testing
