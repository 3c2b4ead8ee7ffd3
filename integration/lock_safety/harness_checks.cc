// SPDX-License-Identifier: Apache-2.0
#include "integration/lock_safety/harness_checks.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::integration {

bool IsWriterTag(absl::string_view tag) { return absl::StartsWith(tag, "wr-"); }

std::string CheckExclusion(const std::vector<Section>& all, int64_t final_counter) {
  const std::vector<Overlap> overlaps = FindOverlaps(all);
  int64_t max_overlap_ns = 0;
  for (const Overlap& o : overlaps) {
    max_overlap_ns = std::max(max_overlap_ns, o.overlap_ns);
    EXPECT_TRUE(o.allowed) << o.earlier << " and " << o.later << " overlapped for "
                           << o.overlap_ns / 1000 << " us, and " << o.earlier
                           << " was not told its lock was lost before";
  }
  const CounterCheck counter = CheckCounter(all, overlaps);
  EXPECT_THAT(counter.errors, ::testing::IsEmpty());
  if (overlaps.empty()) {
    // Every write that landed counts once: successes, and lost holders that wrote before
    // they were stopped (plus, at most, the writes whose outcome they never learnt).
    EXPECT_GE(final_counter, counter.min_final);
    EXPECT_LE(final_counter, counter.max_final);
    EXPECT_GE(final_counter, counter.writes);
    EXPECT_LE(final_counter, counter.writes + counter.unknown_writes);
  }
  ::testing::Test::RecordProperty("overlaps", static_cast<int>(overlaps.size()));
  return absl::StrFormat(
      "counter %d (%d writes + %d of unknown outcome; bounds [%d, %d]); overlaps %d (max %.3f ms)",
      final_counter, counter.writes, counter.unknown_writes, counter.min_final, counter.max_final,
      overlaps.size(), max_overlap_ns / 1e6);
}

std::string CheckPermits(const std::vector<Section>& all, int limit) {
  const LimitCheck check = CheckLimit(all, limit);
  EXPECT_THAT(check.errors, ::testing::IsEmpty());
  EXPECT_GE(check.peak, 2) << "no two holders of the semaphore ever ran at once";
  ::testing::Test::RecordProperty("peak", check.peak);
  return absl::StrFormat("at most %d sections at once (limit %d), %d over the limit", check.peak,
                         limit, check.errors.size());
}

std::string CheckReadWrite(const std::vector<Section>& all, int64_t final_counter) {
  const std::vector<Overlap> overlaps = FindOverlaps(all);
  int reader_overlaps = 0;
  for (const Overlap& o : overlaps) {
    if (!IsWriterTag(o.earlier) && !IsWriterTag(o.later)) {
      ++reader_overlaps;
      continue;
    }
    EXPECT_TRUE(o.allowed) << o.earlier << " and " << o.later << " overlapped for "
                           << o.overlap_ns / 1000 << " us, and " << o.earlier
                           << " was not told its lock was lost before";
  }
  EXPECT_GE(reader_overlaps, 1) << "no two readers ever held the lock at once";
  const CounterCheck counter = CheckCounter(all, overlaps);
  EXPECT_THAT(counter.errors, ::testing::IsEmpty());
  EXPECT_GE(final_counter, counter.writes);
  EXPECT_LE(final_counter, counter.writes + counter.unknown_writes);
  int writers_through = 0;
  for (const Section& s : all) writers_through += IsWriterTag(s.tag) && s.exit_code == 0;
  ::testing::Test::RecordProperty("reader_overlaps", reader_overlaps);
  return absl::StrFormat(
      "counter %d (%d writes + %d of unknown outcome); %d writer sections got "
      "through; readers overlapped %d times; %d overlaps with a writer",
      final_counter, counter.writes, counter.unknown_writes, writers_through, reader_overlaps,
      overlaps.size() - reader_overlaps);
}

}  // namespace registry::integration
