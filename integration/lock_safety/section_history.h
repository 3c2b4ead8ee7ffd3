// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/section_history.h
//
// The harness's evidence as a history (integration/history/README.md), so that the history
// checker judges the holds too, beside section_log.h's own checks. Each section that started is
// one hold of its own process (its tag): acquired at its "start" step, lost at its "term" step,
// released when it stopped (Section::stop_ns()); the release's outcome is ok when its registryctl
// exited 0, else unknown. These are the bounds the harness can see from outside `registryctl`
// (it logs nothing between the acquisition and CMD's start), so a hold is certain exactly while
// its section ran, as FindOverlaps and CheckLimit take it.
//
// Not recorded: the counter's reads and writes (a lost holder may write a value another section
// writes too, and the checker matches reads to writes by value: CheckCounter judges those), and
// the readers of a read/write lock (shared holds, which the checker does not model).
//
// Thread safety: a plain function.
#ifndef REGISTRY_INTEGRATION_LOCK_SAFETY_SECTION_HISTORY_H_
#define REGISTRY_INTEGRATION_LOCK_SAFETY_SECTION_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "integration/lock_safety/section_log.h"

namespace registry::integration {

struct SectionHistoryOptions {
  std::string lock{};  // the lock's name
  int capacity = 1;    // the permits of a semaphore; 1 for a lock
  // Sections whose tag starts with this are left out (the readers of a read/write lock); "":
  // none.
  std::string skip_tag_prefix{};
  // Added to the sections' CLOCK_REALTIME times to put them on the history's CLOCK_MONOTONIC
  // (measured once, as monotonic minus realtime, on the host that logged them).
  int64_t realtime_to_monotonic_ns = 0;
};

// Writes one history file per section into `dir` (an existing directory).
// Errors: those of HistoryRecorder (a tag that is not a file name, a failed write).
absl::Status RecordSections(const std::vector<Section>& sections,
                            const SectionHistoryOptions& options, const std::string& dir);

}  // namespace registry::integration

#endif  // REGISTRY_INTEGRATION_LOCK_SAFETY_SECTION_HISTORY_H_
