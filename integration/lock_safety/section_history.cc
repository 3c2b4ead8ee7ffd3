// SPDX-License-Identifier: Apache-2.0
#include "integration/lock_safety/section_history.h"

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "integration/history/history_recorder.h"

namespace registry::integration {

absl::Status RecordSections(const std::vector<Section>& sections,
                            const SectionHistoryOptions& options, const std::string& dir) {
  const int64_t shift = options.realtime_to_monotonic_ns;
  for (const Section& section : sections) {
    if (!section.start.has_value()) continue;  // it never held the lock
    if (!options.skip_tag_prefix.empty() &&
        absl::StartsWith(section.tag, options.skip_tag_prefix)) {
      continue;
    }
    absl::StatusOr<std::unique_ptr<history::HistoryRecorder>> recorder =
        history::HistoryRecorder::Open(dir, section.tag);
    if (!recorder.ok()) return recorder.status();
    history::HistoryEntry acquire{.op = "lock_acquire",
                                  .lock = options.lock,
                                  .hold = section.tag,
                                  .capacity = options.capacity};
    acquire.call = acquire.ret = *section.start + shift;
    if (absl::Status recorded = (*recorder)->Record(acquire); !recorded.ok()) return recorded;
    if (section.term.has_value()) {
      history::HistoryEntry lost{.op = "lock_lost", .lock = options.lock, .hold = section.tag};
      lost.call = lost.ret = *section.term + shift;
      if (absl::Status recorded = (*recorder)->Record(lost); !recorded.ok()) return recorded;
    }
    history::HistoryEntry release{.op = "lock_release", .lock = options.lock, .hold = section.tag};
    release.call = section.stop_ns() + shift;
    release.ret = section.process_end_ns + shift;
    if (release.ret < release.call) release.ret = release.call;
    if (section.exit_code != 0) {
      release.outcome = history::Outcome::kUnknown;
      release.error = absl::StrCat("registryctl exited ", section.exit_code);
    }
    if (absl::Status recorded = (*recorder)->Record(release); !recorded.ok()) return recorded;
  }
  return absl::OkStatus();
}

}  // namespace registry::integration
