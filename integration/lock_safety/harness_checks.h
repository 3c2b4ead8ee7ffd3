// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/harness_checks.h
//
// The lock-safety harness's verdicts on its evidence (section_log.h), as gtest expectations: each
// records a failure for what it finds wrong and returns a one-line summary for the report.
//
// Thread safety: call from the test's thread (gtest expectations).
#ifndef REGISTRY_INTEGRATION_LOCK_SAFETY_HARNESS_CHECKS_H_
#define REGISTRY_INTEGRATION_LOCK_SAFETY_HARNESS_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "integration/lock_safety/section_log.h"

namespace registry::integration {

// A writer's section of a read/write lock ("wr-..."); readers' are "rd-...".
bool IsWriterTag(absl::string_view tag);

// Checks that no two holders of a lock overlapped unless the earlier one was told of its loss
// first, and that the counter (`final_counter` at the end) lost no increment.
std::string CheckExclusion(const std::vector<Section>& all, int64_t final_counter);

// Checks that never more than `limit` holders of a semaphore ran at once (not counting those
// told of a loss), and that they did share it.
std::string CheckPermits(const std::vector<Section>& all, int limit);

// Checks that no writer of a read/write lock overlapped anyone unless the earlier one was told
// of its loss first, that readers did overlap each other, and that the writers' counter lost no
// increment.
std::string CheckReadWrite(const std::vector<Section>& all, int64_t final_counter);

}  // namespace registry::integration

#endif  // REGISTRY_INTEGRATION_LOCK_SAFETY_HARNESS_CHECKS_H_
