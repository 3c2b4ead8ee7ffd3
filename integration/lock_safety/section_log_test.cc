// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/section_log_test.cc
//
// The lock-safety harness's checks (section_log.h) on hand-made evidence.
#include "integration/lock_safety/section_log.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::integration {
namespace {

Section Ran(std::string tag, int exit_code, int64_t start, int64_t end, int64_t read) {
  Section s;
  s.tag = std::move(tag);
  s.exit_code = exit_code;
  s.start = start;
  s.end = end;
  s.process_end_ns = end + 1;
  s.read_value = read;
  s.put_value = read + 1;
  s.wrote_value = read + 1;
  return s;
}

TEST(SectionLogTest, OverlapOfTwoHoldersThatKeptTheLockIsNotAllowed) {
  std::vector<Overlap> overlaps =
      FindOverlaps({Ran("a", 0, 100, 200, 0), Ran("b", 0, 150, 300, 1)});
  ASSERT_EQ(overlaps.size(), 1u);
  EXPECT_FALSE(overlaps[0].allowed);
  EXPECT_EQ(overlaps[0].overlap_ns, 50);
}

TEST(SectionLogTest, OverlapIsAllowedOnlyAfterTheLostHolderWasTold) {
  Section told = Ran("a", kExitLockLost, 100, 200, 0);  // went on until 200 after SIGTERM at 140
  told.term = 140;
  EXPECT_TRUE(FindOverlaps({told, Ran("b", 0, 150, 300, 0)}).at(0).allowed);
  EXPECT_FALSE(FindOverlaps({told, Ran("c", 0, 130, 300, 0)}).at(0).allowed)
      << "started before the lost holder was told";
}

TEST(SectionLogTest, CounterReplayFlagsAReadOfAValueNoOneLeft) {
  const std::vector<Section> sections = {Ran("a", 0, 100, 200, 0), Ran("b", 0, 300, 400, 0)};
  CounterCheck check = CheckCounter(sections, FindOverlaps(sections));
  ASSERT_EQ(check.errors.size(), 1u);
  EXPECT_THAT(check.errors[0], ::testing::HasSubstr("b read 0"));
}

TEST(SectionLogTest, WriteOfUnknownOutcomeWidensTheFinalRangeByOne) {
  Section killed = Ran("a", kExitLockLost, 100, 200, 0);
  killed.wrote_value.reset();
  const std::vector<Section> sections = {killed};
  CounterCheck check = CheckCounter(sections, {});
  EXPECT_EQ(check.min_final, 0);
  EXPECT_EQ(check.max_final, 1);
  EXPECT_EQ(check.unknown_writes, 1);
}

TEST(SectionLogTest, LimitCheckCountsOverlappingHoldersButExcusesOnesToldOfALoss) {
  const std::vector<Section> three = {Ran("a", 0, 100, 300, 0), Ran("b", 0, 120, 300, 0),
                                      Ran("c", 0, 140, 300, 0)};
  LimitCheck check = CheckLimit(three, 3);
  EXPECT_EQ(check.peak, 3);
  EXPECT_THAT(check.errors, ::testing::IsEmpty());
  check = CheckLimit(three, 2);
  ASSERT_EQ(check.errors.size(), 1u);
  EXPECT_THAT(check.errors[0], ::testing::HasSubstr("c started while 2 held permits: a, b"));
  Section told = Ran("a", kExitLockLost, 100, 300, 0);
  told.term = 130;
  EXPECT_THAT(CheckLimit({told, Ran("b", 0, 120, 300, 0), Ran("c", 0, 140, 300, 0)}, 2).errors,
              ::testing::IsEmpty());
  // Sections one after the other never overlap.
  EXPECT_EQ(CheckLimit({Ran("a", 0, 100, 200, 0), Ran("b", 0, 200, 300, 0)}, 1).peak, 1);
}

TEST(SectionLogTest, LogLinesAreMatchedToTheirSectionsAndMalformedOnesNamed) {
  std::map<std::string, Section> sections;
  sections["w0i0"].tag = "w0i0";
  ASSERT_TRUE(
      ApplyLog("start 5 w0i0\nread 6 w0i0 41\nwrote 7 w0i0 42\nend 8 w0i0\n", &sections).ok());
  EXPECT_EQ(sections["w0i0"].read_value, 41);
  EXPECT_EQ(sections["w0i0"].end, 8);
  absl::Status bad = ApplyLog("start 9 nobody\n", &sections);
  EXPECT_THAT(bad.message(), ::testing::HasSubstr("'start 9 nobody'"));
}

}  // namespace
}  // namespace registry::integration
