// SPDX-License-Identifier: Apache-2.0
// SessionLifecycle: every transition of the instance session, driven with times and answers
// only (no server, no clock), and a randomized run that tries to keep a session past its loss
// deadline.
#include "repository/session_lifecycle.h"

#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Kind = SessionStep::Kind;

constexpr absl::Duration kTtl = absl::Seconds(10);
constexpr absl::Duration kRetry = absl::Seconds(1);
const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);  // any monotonic origin

absl::Duration NoBackoff(int) { return absl::ZeroDuration(); }

class SessionLifecycleTest : public ::testing::Test {
 protected:
  // TTL 10 s, lock-delay 15 s: the session counts as lost 10 s after the last success's send.
  SessionLifecycle lifecycle_{kTtl, HoldDeadlineFor(kTtl, absl::Seconds(15))};

  void CreateLive(absl::Time sent) { lifecycle_.Created("s1", sent, std::nullopt); }
};

TEST_F(SessionLifecycleTest, TheFirstSessionIsLiveConnectedAndStartsTheRenewer) {
  const SessionEffects effects = lifecycle_.Created("s1", kT0, std::nullopt);

  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);
  EXPECT_EQ(lifecycle_.session(), "s1");
  EXPECT_EQ(effects.created, "s1");
  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kConnected));
  EXPECT_TRUE(effects.start_renewer);
  EXPECT_FALSE(effects.restore);
  EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(10));
}

TEST_F(SessionLifecycleTest, AFirstSessionMadeDuringAnOutageIsCheckedBeforeItCountsAsLive) {
  const SessionEffects effects = lifecycle_.Created("s1", kT0, ConnectionState::kSuspended);

  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kSuspended);
  EXPECT_THAT(effects.publish, IsEmpty());
  EXPECT_TRUE(effects.check_now);
  EXPECT_EQ(lifecycle_.Next(kT0).kind, Kind::kRenew);
  EXPECT_THAT(lifecycle_.Renewed("s1", kT0).publish, ElementsAre(ConnectionState::kReconnected));
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);
}

TEST_F(SessionLifecycleTest, ARenewalIsDueHalfATtlAfterTheSendOfTheLastSuccess) {
  CreateLive(kT0);
  SessionStep step = lifecycle_.Next(kT0 + absl::Seconds(1));
  EXPECT_EQ(step.kind, Kind::kWait);
  EXPECT_EQ(step.until, kT0 + absl::Seconds(5));

  step = lifecycle_.Next(kT0 + absl::Seconds(5));
  ASSERT_EQ(step.kind, Kind::kRenew);
  EXPECT_EQ(step.session, "s1");
  lifecycle_.Renewed("s1", kT0 + absl::Seconds(5));  // answered late: the send time counts

  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(7)).until, kT0 + absl::Seconds(10));
  EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(15));
}

TEST_F(SessionLifecycleTest, TheRenewalBudgetEndsAtTheLossDeadline) {
  CreateLive(kT0);
  lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(5), kRetry);
  const SessionStep step = lifecycle_.Next(kT0 + absl::Milliseconds(9300));

  ASSERT_EQ(step.kind, Kind::kRenew);
  EXPECT_EQ(step.budget, absl::Milliseconds(700));
}

TEST_F(SessionLifecycleTest, AFailedRenewalSuspendsOnceAndRetriesNoLaterThanTheDeadline) {
  CreateLive(kT0);
  SessionEffects first = lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(5), kRetry);
  EXPECT_THAT(first.publish, ElementsAre(ConnectionState::kSuspended));
  EXPECT_TRUE(first.suspended);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(5)).until, kT0 + absl::Seconds(6));

  SessionEffects second = lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(6), kRetry);
  EXPECT_THAT(second.publish, IsEmpty());
  EXPECT_FALSE(second.suspended);

  // A retry that would come after the deadline comes at it.
  lifecycle_.RenewFailed("s1", kT0 + absl::Milliseconds(9500), kRetry);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Milliseconds(9500)).until, kT0 + absl::Seconds(10));
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kSuspended);
}

TEST_F(SessionLifecycleTest, ARenewalThatSucceedsAfterFailuresReconnects) {
  CreateLive(kT0);
  lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(5), kRetry);
  const SessionEffects effects = lifecycle_.Renewed("s1", kT0 + absl::Seconds(6));

  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kReconnected));
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);
  EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(16));
}

TEST_F(SessionLifecycleTest, NoFailureMovesTheLossDeadline) {
  CreateLive(kT0);
  for (int second = 5; second < 10; ++second) {
    lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(second), kRetry);
    EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(10));
  }
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(10)).kind, Kind::kDeclareLost);

  const SessionEffects effects = lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(10), kRetry);
  ASSERT_TRUE(effects.lost.has_value());
  EXPECT_EQ(effects.lost->session, "s1");
  EXPECT_TRUE(effects.lost->maybe_alive);  // the clock decided: the server may still have it
  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kLost));
  EXPECT_EQ(lifecycle_.session(), "");
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(10)).kind, Kind::kCreate);
}

TEST_F(SessionLifecycleTest, AFirstFailureAtTheDeadlinePublishesSuspendedThenLost) {
  CreateLive(kT0);
  const SessionEffects effects = lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(11), kRetry);

  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kSuspended, ConnectionState::kLost));
  EXPECT_TRUE(effects.lost.has_value());
}

TEST_F(SessionLifecycleTest, ARenewerThatRunsLateDeclaresTheSessionLostAtTheDeadline) {
  CreateLive(kT0);
  EXPECT_THAT(lifecycle_.Expired(kT0 + absl::Seconds(9)).publish, IsEmpty());  // not yet

  const SessionStep step = lifecycle_.Next(kT0 + absl::Seconds(12));
  ASSERT_EQ(step.kind, Kind::kDeclareLost);
  const SessionEffects effects = lifecycle_.Expired(kT0 + absl::Seconds(12));
  ASSERT_TRUE(effects.lost.has_value());
  EXPECT_TRUE(effects.lost->maybe_alive);
}

TEST_F(SessionLifecycleTest, ASessionTheServerDoesNotKnowIsLostAndNotMaybeAlive) {
  CreateLive(kT0);
  const SessionEffects effects = lifecycle_.RenewRefused("s1");

  ASSERT_TRUE(effects.lost.has_value());
  EXPECT_FALSE(effects.lost->maybe_alive);
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLost);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kCreate);
}

TEST_F(SessionLifecycleTest, AnAnswerAboutASessionGivenUpChangesNothing) {
  CreateLive(kT0);
  lifecycle_.RenewRefused("s1");

  EXPECT_THAT(lifecycle_.Renewed("s1", kT0 + absl::Seconds(1)).publish, IsEmpty());
  EXPECT_FALSE(lifecycle_.RenewRefused("s1").lost.has_value());
  EXPECT_FALSE(lifecycle_.RenewFailed("s1", kT0 + absl::Seconds(30), kRetry).lost.has_value());
  EXPECT_FALSE(lifecycle_.CheckNow("s1", kT0).check_now);
  EXPECT_EQ(lifecycle_.session(), "");
}

TEST_F(SessionLifecycleTest, AReplacementSessionRestoresTheKeysThenReconnects) {
  CreateLive(kT0);
  lifecycle_.RenewRefused("s1");
  const SessionEffects created = lifecycle_.Created("s2", kT0 + absl::Seconds(2), std::nullopt);

  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kRestoring);
  EXPECT_TRUE(created.restore);
  EXPECT_FALSE(created.start_renewer);  // the renewer runs already
  EXPECT_THAT(created.publish, IsEmpty());
  EXPECT_THAT(lifecycle_.RestoreDone().publish, ElementsAre(ConnectionState::kReconnected));
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);
  EXPECT_THAT(lifecycle_.RestoreDone().publish, IsEmpty());
}

TEST_F(SessionLifecycleTest, CreateFailuresBackOffByTheirNumberInARow) {
  CreateLive(kT0);
  lifecycle_.RenewRefused("s1");
  std::vector<int> asked;
  auto backoff = [&asked](int failures) {
    asked.push_back(failures);
    return absl::Seconds(failures);
  };
  EXPECT_TRUE(lifecycle_.CreateFailed(kT0, backoff).log_create_failure);
  EXPECT_FALSE(lifecycle_.CreateFailed(kT0 + absl::Seconds(1), backoff).log_create_failure);
  EXPECT_THAT(asked, ElementsAre(1, 2));
  const SessionStep step = lifecycle_.Next(kT0 + absl::Seconds(2));
  EXPECT_EQ(step.kind, Kind::kWait);
  EXPECT_EQ(step.until, kT0 + absl::Seconds(3));

  lifecycle_.Created("s2", kT0 + absl::Seconds(3), std::nullopt);
  lifecycle_.RenewRefused("s2");
  lifecycle_.CreateFailed(kT0 + absl::Seconds(4), backoff);
  EXPECT_THAT(asked, ElementsAre(1, 2, 1));  // a success ends the run
}

TEST_F(SessionLifecycleTest, TheFirstCreateFailingIsTheCallersErrorAndSchedulesNothing) {
  EXPECT_FALSE(lifecycle_.CreateFailed(kT0, NoBackoff).log_create_failure);
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kNone);
  EXPECT_EQ(lifecycle_.Next(kT0).until, absl::InfiniteFuture());
}

TEST_F(SessionLifecycleTest, AnUnreachableServerSuspendsALiveSessionAndChecksItNow) {
  EXPECT_THAT(lifecycle_.Unreachable(kT0).publish, IsEmpty());  // no session: not its business
  CreateLive(kT0);
  const SessionEffects effects = lifecycle_.Unreachable(kT0 + absl::Seconds(1));

  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kSuspended));
  EXPECT_TRUE(effects.check_now);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kRenew);
  EXPECT_THAT(lifecycle_.Unreachable(kT0 + absl::Seconds(2)).publish, IsEmpty());
}

TEST_F(SessionLifecycleTest, ALockCanHaveOnlyTheLiveSessionCheckedAtOnce) {
  CreateLive(kT0);
  EXPECT_FALSE(lifecycle_.CheckNow("other", kT0 + absl::Seconds(1)).check_now);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kWait);

  EXPECT_TRUE(lifecycle_.CheckNow("s1", kT0 + absl::Seconds(1)).check_now);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kRenew);
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);  // checked, not suspended
}

TEST_F(SessionLifecycleTest, AbandonHandsOverTheLiveSessionAndSchedulesNothing) {
  CreateLive(kT0);
  EXPECT_EQ(lifecycle_.Abandon(), "s1");
  EXPECT_EQ(lifecycle_.session(), "");
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Hours(1)).until, absl::InfiniteFuture());
}

// Drives the machine as the renewal thread does, with random answers, latencies, late wake-ups
// and outside reports, and checks the safety invariant at every step against the test's own
// record of the last success's send time S: asked at or after S + loss_after the machine says
// the session is lost (and never before), and no wait or renewal call it asks for ends later.
TEST(SessionLifecycleSafetyTest, ARandomRunNeverKeepsASessionPastItsLossDeadline) {
  for (absl::Duration lock_delay : {absl::ZeroDuration(), absl::Milliseconds(200), kTtl}) {
    const HoldDeadline deadline = HoldDeadlineFor(kTtl, lock_delay);
    for (uint32_t seed = 1; seed <= 40; ++seed) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << ", lock-delay " << lock_delay);
      std::mt19937 random(seed);
      auto millis = [&random](int max) {
        return absl::Milliseconds(std::uniform_int_distribution<int>(0, max)(random));
      };
      SessionLifecycle lifecycle(kTtl, deadline);
      absl::Time now = kT0;
      absl::Time last_success = now;
      lifecycle.Created("s0", now, std::nullopt);
      int sessions = 1;
      for (int round = 0; round < 400; ++round) {
        SCOPED_TRACE(testing::Message() << "round " << round);
        const int outside = std::uniform_int_distribution<int>(0, 9)(random);
        if (outside == 0) lifecycle.Unreachable(now);
        if (outside == 1) lifecycle.CheckNow(lifecycle.session(), now);
        const SessionStep step = lifecycle.Next(now);
        if (!lifecycle.session().empty()) {
          // The invariant: at or after the deadline the answer is "lost", and never before.
          ASSERT_EQ(step.kind == Kind::kDeclareLost, now >= last_success + deadline.loss_after);
        }
        switch (step.kind) {
          case Kind::kWait:
            ASSERT_NE(step.until, absl::InfiniteFuture());
            if (!lifecycle.session().empty()) {
              ASSERT_LE(step.until, last_success + deadline.loss_after);
            }
            now = std::max(now, step.until) + millis(50);  // a thread wakes a little late
            break;
          case Kind::kDeclareLost:
            ASSERT_FALSE(lifecycle.Expired(now).lost->session.empty());
            break;
          case Kind::kCreate: {
            const absl::Time sent = now;
            now += millis(3000);
            if (std::uniform_int_distribution<int>(0, 2)(random) == 0) {
              lifecycle.CreateFailed(now, [](int) { return absl::Milliseconds(300); });
            } else {
              lifecycle.Created("s" + std::to_string(sessions++), sent, std::nullopt);
              last_success = sent;
              lifecycle.RestoreDone();
            }
            break;
          }
          case Kind::kRenew: {
            ASSERT_LE(now + step.budget, last_success + deadline.loss_after);
            const absl::Time sent = now;
            const int answer = std::uniform_int_distribution<int>(0, 9)(random);
            now += std::min(step.budget, millis(4000));  // the call is cut at its budget
            if (answer < 5 && now - sent < step.budget) {
              lifecycle.Renewed(step.session, sent);
              last_success = sent;
            } else if (answer == 5) {
              lifecycle.RenewRefused(step.session);
            } else {
              lifecycle.RenewFailed(step.session, now, millis(1000));
            }
            break;
          }
        }
      }
      EXPECT_GT(sessions, 1);  // the run did lose sessions
    }
  }
}

}  // namespace
}  // namespace registry
