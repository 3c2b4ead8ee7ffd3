// SPDX-License-Identifier: Apache-2.0
// tests/repository/doomed_sessions_test.cc
//
// The schedule of destroying sessions counted lost (repository/doomed_sessions.h), on made-up
// times: no clock, no server.
#include "repository/doomed_sessions.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr absl::Duration kGiveUpAfter = absl::Seconds(20);
const absl::Time kLost = absl::FromUnixSeconds(1000);

TEST(DoomedSessionsTest, AnAddedSessionIsDueAtOnce) {
  DoomedSessions doomed(kGiveUpAfter);
  EXPECT_EQ(doomed.NextAttempt(), absl::InfiniteFuture());
  doomed.Add("s1", kLost);
  EXPECT_EQ(doomed.NextAttempt(), kLost);
  EXPECT_THAT(doomed.DueAt(kLost), Optional(std::string("s1")));
}

TEST(DoomedSessionsTest, AFailedAttemptIsRetriedAtTheGivenTimeAndNotBefore) {
  DoomedSessions doomed(kGiveUpAfter);
  doomed.Add("s1", kLost);
  doomed.Failed("s1", kLost + absl::Seconds(1));
  EXPECT_EQ(doomed.DueAt(kLost + absl::Milliseconds(999)), std::nullopt);
  EXPECT_EQ(doomed.NextAttempt(), kLost + absl::Seconds(1));
  EXPECT_THAT(doomed.DueAt(kLost + absl::Seconds(1)), Optional(std::string("s1")));
}

TEST(DoomedSessionsTest, AttemptsGoOnUntilTheDestroyIsConfirmed) {
  DoomedSessions doomed(kGiveUpAfter);
  doomed.Add("s1", kLost);
  for (int attempt = 1; attempt <= 10; ++attempt) {
    const absl::Time at = kLost + absl::Seconds(attempt);
    ASSERT_THAT(doomed.DueAt(at), Optional(std::string("s1"))) << "attempt " << attempt;
    doomed.Failed("s1", at + absl::Seconds(1));
  }
  doomed.Destroyed("s1");
  EXPECT_TRUE(doomed.empty());
  EXPECT_EQ(doomed.DueAt(kLost + absl::Seconds(12)), std::nullopt);
  EXPECT_EQ(doomed.NextAttempt(), absl::InfiniteFuture());
}

TEST(DoomedSessionsTest, ASessionThatHasSurelyExpiredIsForgotten) {
  DoomedSessions doomed(kGiveUpAfter);
  doomed.Add("s1", kLost);
  doomed.Failed("s1", kLost + kGiveUpAfter - absl::Milliseconds(1));
  EXPECT_THAT(doomed.DueAt(kLost + kGiveUpAfter - absl::Milliseconds(1)),
              Optional(std::string("s1")));
  doomed.Failed("s1", kLost + kGiveUpAfter + absl::Seconds(1));
  EXPECT_EQ(doomed.DueAt(kLost + kGiveUpAfter), std::nullopt);
  EXPECT_TRUE(doomed.empty());
}

TEST(DoomedSessionsTest, EachSessionKeepsItsOwnSchedule) {
  DoomedSessions doomed(kGiveUpAfter);
  doomed.Add("s1", kLost);
  doomed.Failed("s1", kLost + absl::Seconds(5));
  doomed.Add("s2", kLost + absl::Seconds(1));
  EXPECT_EQ(doomed.NextAttempt(), kLost + absl::Seconds(1));
  EXPECT_THAT(doomed.DueAt(kLost + absl::Seconds(1)), Optional(std::string("s2")));
  doomed.Destroyed("s2");
  EXPECT_EQ(doomed.DueAt(kLost + absl::Seconds(4)), std::nullopt);
  EXPECT_THAT(doomed.DueAt(kLost + absl::Seconds(5)), Optional(std::string("s1")));
}

TEST(DoomedSessionsTest, OnlyTheNewestAreRememberedAndTakeAllEmptiesTheSchedule) {
  DoomedSessions doomed(kGiveUpAfter);
  for (int i = 0; i < static_cast<int>(DoomedSessions::kMaxRemembered) + 2; ++i) {
    doomed.Add("s" + std::to_string(i), kLost);
  }
  const std::vector<std::string> all = doomed.TakeAll();
  ASSERT_EQ(all.size(), DoomedSessions::kMaxRemembered);
  EXPECT_EQ(all.front(), "s2");
  EXPECT_EQ(all.back(), "s9");
  EXPECT_TRUE(doomed.empty());
  EXPECT_THAT(doomed.TakeAll(), IsEmpty());
}

TEST(DoomedSessionsTest, ReportsOnUnknownSessionsChangeNothing) {
  DoomedSessions doomed(kGiveUpAfter);
  doomed.Add("s1", kLost);
  doomed.Destroyed("other");
  doomed.Failed("other", kLost + absl::Seconds(9));
  EXPECT_THAT(doomed.TakeAll(), ElementsAre("s1"));
}

}  // namespace
}  // namespace registry
