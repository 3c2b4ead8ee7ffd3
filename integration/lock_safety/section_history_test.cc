// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/section_history_test.cc
//
// The harness's sections as a history (section_history.h), judged by the history checker: a
// loss told before the next holder started passes, an overlap nobody was told of does not, and
// a semaphore's capacity is the checker's limit.
#include "integration/lock_safety/section_history.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "integration/history/history_check.h"

namespace registry::integration {
namespace {

Section Held(std::string tag, int64_t start, int64_t end) {
  Section s;
  s.tag = std::move(tag);
  s.exit_code = 0;
  s.start = start;
  s.end = end;
  s.process_end_ns = end + 100;
  return s;
}

Section LostAndTold(std::string tag, int64_t start, int64_t term) {
  Section s;
  s.tag = std::move(tag);
  s.exit_code = kExitLockLost;
  s.start = start;
  s.term = term;
  s.process_end_ns = term + 100;
  return s;
}

// The checker's exit code on `sections` recorded with `options`; skips the test when this build
// has no checker (except in CI, where that fails it).
int CheckerExitCode(const std::vector<Section>& sections, const SectionHistoryOptions& options) {
  absl::StatusOr<std::string> dir = history::FreshHistoryDir(history::CurrentTestHistoryName());
  EXPECT_TRUE(dir.ok()) << dir.status();
  if (!dir.ok()) return -1;
  const absl::Status recorded = RecordSections(sections, options, *dir);
  EXPECT_TRUE(recorded.ok()) << recorded;
  absl::StatusOr<history::CheckerVerdict> verdict = history::RunChecker(*dir);
  if (!verdict.ok()) return -2;
  return verdict->exit_code;
}

bool NoChecker() {
  const char* ci = std::getenv("REGISTRY_CI");
  return !history::CheckerBuilt() && !(ci != nullptr && std::string(ci) == "1");
}

TEST(SectionHistoryTest, ALossToldBeforeTheNextHolderStartedPasses) {
  if (NoChecker()) GTEST_SKIP() << "this build has no history checker";
  EXPECT_EQ(CheckerExitCode({LostAndTold("a", 1000, 5000), Held("b", 5500, 9000)}, {.lock = "l"}),
            0);
}

TEST(SectionHistoryTest, AnOverlapNobodyWasToldOfIsAViolation) {
  if (NoChecker()) GTEST_SKIP() << "this build has no history checker";
  EXPECT_EQ(CheckerExitCode({Held("a", 1000, 6000), Held("b", 5500, 9000)}, {.lock = "l"}), 1);
}

TEST(SectionHistoryTest, ASemaphoreMayOverlapUpToItsCapacityOnly) {
  if (NoChecker()) GTEST_SKIP() << "this build has no history checker";
  const std::vector<Section> three = {Held("a", 1000, 6000), Held("b", 2000, 7000),
                                      Held("c", 3000, 8000)};
  EXPECT_EQ(CheckerExitCode(three, {.lock = "s", .capacity = 3}), 0);
  EXPECT_EQ(CheckerExitCode(three, {.lock = "s", .capacity = 2}), 1);
}

TEST(SectionHistoryTest, SkippedReadersDoNotCount) {
  if (NoChecker()) GTEST_SKIP() << "this build has no history checker";
  const std::vector<Section> readers_then_writer = {
      Held("rd-a", 1000, 6000), Held("rd-b", 2000, 7000), Held("wr-c", 8000, 9000)};
  EXPECT_EQ(CheckerExitCode(readers_then_writer, {.lock = "rw", .skip_tag_prefix = "rd-"}), 0);
  EXPECT_EQ(CheckerExitCode(readers_then_writer, {.lock = "rw"}), 1);
}

}  // namespace
}  // namespace registry::integration
