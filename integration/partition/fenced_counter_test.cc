// SPDX-License-Identifier: Apache-2.0
// integration/partition/fenced_counter_test.cc
//
// CheckFencedCounter on hand-made attempts: what a lost increment of the fenced counter looks
// like, and which failed writes may still have been applied. No lab, no root.
#include "integration/partition/fenced_counter.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::partition {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

FencedAttempt Ok(const char* writer, int64_t value) { return {writer, value, absl::OkStatus()}; }

TEST(CheckFencedCounterTest, ConsecutiveAcknowledgedWritesAndRefusalsPass) {
  const FencedFigures figures = CheckFencedCounter(
      {Ok("c0", 1), Ok("c1", 2), {"app", 3, absl::AbortedError("hold lost"), true}, Ok("c2", 3)},
      3);
  EXPECT_THAT(figures.errors, IsEmpty());
  EXPECT_EQ(figures.acknowledged, 3);
  EXPECT_EQ(figures.refused, 1);
  EXPECT_EQ(figures.unknown, 0);
}

TEST(CheckFencedCounterTest, TwoWritersAcknowledgedTheSameValueIsALostIncrement) {
  const FencedFigures figures = CheckFencedCounter({Ok("c0", 1), Ok("c1", 2), Ok("c3", 2)}, 2);
  EXPECT_THAT(figures.errors, ElementsAre(HasSubstr("value 2 acknowledged to c1 and to c3")));
}

TEST(CheckFencedCounterTest, AWriteOfUnknownOutcomeMayAccountForTheFinalValue) {
  const std::vector<FencedAttempt> attempts = {
      Ok("c0", 1), {"c1", 2, absl::UnavailableError("timed out")}, Ok("c2", 3)};
  EXPECT_THAT(CheckFencedCounter(attempts, 3).errors, IsEmpty());
  // Refused writes were never applied: they cannot account for it.
  const std::vector<FencedAttempt> refused = {
      Ok("c0", 1), {"c1", 2, absl::AbortedError("hold lost")}, Ok("c2", 3)};
  EXPECT_THAT(CheckFencedCounter(refused, 3).errors,
              ElementsAre(HasSubstr("ended at 3 with only 2 writes acknowledged")));
}

TEST(CheckFencedCounterTest, AnAcknowledgedValueAboveTheFinalOneWasUndone) {
  EXPECT_THAT(CheckFencedCounter({Ok("c0", 1), Ok("c1", 2)}, 1).errors,
              ElementsAre(HasSubstr("c1 wrote 2 but the counter ended at 1")));
}

}  // namespace
}  // namespace registry::partition
