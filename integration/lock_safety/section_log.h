// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/section_log.h
//
// The evidence of the lock-safety harness and its checks. Each iteration is one `registryctl
// lock` process (its exit code, and when it exited) running critical_section.sh, which logs its
// steps with CLOCK_REALTIME timestamps. From that the checks find
//   - overlaps: two critical sections running at the same time. One is allowed only when the
//     earlier holder's registryctl exited with the lock-lost code and the section had been told
//     (SIGTERM, logged as "term") before the later one started;
//   - the counter: replaying the sections in start order, each one that overlapped nothing must
//     have read a value the sections before it can have left, which bounds the final counter.
//
// Thread safety: plain values and pure functions.
#ifndef REGISTRY_INTEGRATION_LOCK_SAFETY_SECTION_LOG_H_
#define REGISTRY_INTEGRATION_LOCK_SAFETY_SECTION_LOG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace registry::integration {

inline constexpr int kExitLockLost = 3;  // registryctl lock: the lock was lost while CMD ran

struct Section {
  std::string tag;             // "w<worker>i<iteration>"
  int exit_code = -1;          // of `registryctl lock`; -1 if it did not finish
  int64_t process_end_ns = 0;  // when it exited, CLOCK_REALTIME
  // Steps of critical_section.sh, CLOCK_REALTIME ns; absent if the step was not logged.
  std::optional<int64_t> start, end, term;
  std::optional<int64_t> read_value;   // "read V"
  std::optional<int64_t> put_value;    // "put V": the write was about to be sent
  std::optional<int64_t> wrote_value;  // "wrote V": it succeeded

  bool lost() const { return exit_code == kExitLockLost; }
  // When the section stopped running: its "end" or "term" step, else (killed without a trace)
  // when its registryctl exited.
  int64_t stop_ns() const;
};

// Adds the steps of `log` (lines "<event> <ns> <tag> [<value>]") to the sections of `sections`
// with that tag. Errors: InvalidArgument naming the line for a malformed line, an unknown tag
// or event, or a step logged twice.
absl::Status ApplyLog(absl::string_view log, std::map<std::string, Section>* sections);

struct Overlap {
  std::string earlier;  // tag of the section that started first
  std::string later;
  int64_t overlap_ns = 0;
  bool allowed = false;  // the earlier one was lost and told so before the later one started
};

// Every pair of sections (that started) whose run times intersect.
std::vector<Overlap> FindOverlaps(const std::vector<Section>& sections);

struct CounterCheck {
  int64_t min_final = 0;  // the final counter must be in [min_final, max_final]
  int64_t max_final = 0;
  int writes = 0;                   // sections whose write succeeded ("wrote")
  int unknown_writes = 0;           // sections that sent a write without learning its outcome
  std::vector<std::string> errors;  // sections that read an impossible value
};

// Replays `sections` (counter initially 0) in start order, see above.
CounterCheck CheckCounter(const std::vector<Section>& sections,
                          const std::vector<Overlap>& overlaps);

// For a semaphore of `limit` permits: sections may overlap, but no section may start while
// `limit` others run, not counting those lost and told so (as for an overlap) before it started.
struct LimitCheck {
  int peak = 0;                     // the most sections that ran at once
  std::vector<std::string> errors;  // the sections that started past the limit, and with whom
};
LimitCheck CheckLimit(const std::vector<Section>& sections, int limit);

}  // namespace registry::integration

#endif  // REGISTRY_INTEGRATION_LOCK_SAFETY_SECTION_LOG_H_
