// SPDX-License-Identifier: Apache-2.0
// tests/repository/hold_deadline_test.cc
#include "repository/hold_deadline.h"

#include "gtest/gtest.h"

namespace registry {
namespace {

TEST(HoldDeadlineTest, ALockDelayOfAQuarterTtlOrMoreKeepsTheLossAtOneTtl) {
  const HoldDeadline deadline = HoldDeadlineFor(absl::Seconds(3), absl::Seconds(3));
  EXPECT_EQ(deadline.foreign_hold_after, absl::Seconds(6));
  EXPECT_EQ(deadline.margin, absl::Seconds(3));
  EXPECT_EQ(deadline.loss_after, absl::Seconds(3));
}

TEST(HoldDeadlineTest, ANoLockDelayMovesTheLossBeforeTheTtl) {
  const HoldDeadline deadline = HoldDeadlineFor(absl::Seconds(30), absl::ZeroDuration());
  EXPECT_EQ(deadline.margin, absl::Seconds(1));
  EXPECT_EQ(deadline.loss_after, absl::Seconds(29));
  const HoldDeadline short_ttl = HoldDeadlineFor(absl::Seconds(1), absl::Milliseconds(100));
  EXPECT_EQ(short_ttl.margin, absl::Milliseconds(250));
  EXPECT_EQ(short_ttl.loss_after, absl::Milliseconds(850));
}

TEST(HoldDeadlineTest, EveryHoldEndsAMarginBeforeAnotherInstanceCanHoldAndNeverAfterOneTtl) {
  for (int ttl_ms : {1000, 3000, 10000, 30000, 86400000}) {
    for (int delay_ms : {0, 1, 100, 600, 3000, 15000, 60000}) {
      const absl::Duration ttl = absl::Milliseconds(ttl_ms);
      const HoldDeadline deadline = HoldDeadlineFor(ttl, absl::Milliseconds(delay_ms));
      EXPECT_EQ(deadline.loss_after + deadline.margin, deadline.foreign_hold_after);
      EXPECT_LE(deadline.loss_after, ttl) << ttl_ms << " " << delay_ms;
      EXPECT_GE(deadline.margin, std::min(ttl / 4, absl::Seconds(1)));
      EXPECT_GT(deadline.loss_after, ttl / 2) << "a renewal at TTL/2 must come before the loss";
    }
  }
}

}  // namespace
}  // namespace registry
