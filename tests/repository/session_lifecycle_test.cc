// SPDX-License-Identifier: Apache-2.0
// SessionLifecycle: every transition of the instance session, driven with inputs (times and
// answers only: no server, no clock), the actions it asks for and their order, and a randomized
// run that tries to keep a session past its loss deadline.
#include "repository/session_lifecycle.h"

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

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

// What a transition asked for, gathered by kind (the order is checked where it matters).
struct Asked {
  std::optional<AnnounceCreated> created;
  std::optional<AnnounceLost> lost;
  std::vector<ConnectionState> publish;
  std::vector<Note> notes;
  bool restore = false;
  bool start_renewer = false;
  bool wake_renewer = false;
};

Asked Gather(const std::vector<SessionAction>& actions) {
  Asked asked;
  for (const SessionAction& action : actions) {
    std::visit(
        [&asked](const auto& act) {
          using Act = std::decay_t<decltype(act)>;
          if constexpr (std::is_same_v<Act, AnnounceCreated>) asked.created = act;
          if constexpr (std::is_same_v<Act, AnnounceLost>) asked.lost = act;
          if constexpr (std::is_same_v<Act, PublishState>) asked.publish.push_back(act.state);
          if constexpr (std::is_same_v<Act, Note>) asked.notes.push_back(act);
          if constexpr (std::is_same_v<Act, RestoreKeys>) asked.restore = true;
          if constexpr (std::is_same_v<Act, StartRenewer>) asked.start_renewer = true;
          if constexpr (std::is_same_v<Act, WakeRenewer>) asked.wake_renewer = true;
        },
        action);
  }
  return asked;
}

class SessionLifecycleTest : public ::testing::Test {
 protected:
  // TTL 10 s, lock-delay 15 s: the session counts as lost 10 s after the last success's send;
  // a failed renewal is retried kRetry later.
  SessionLifecycle lifecycle_{
      SessionRules{.ttl = kTtl,
                   .hold_deadline = HoldDeadlineFor(kTtl, absl::Seconds(15)),
                   .renew_retry = [] { return kRetry; },
                   .create_backoff = [this](int failures) { return backoff_(failures); }}};
  std::function<absl::Duration(int)> backoff_ = NoBackoff;

  Asked Do(const SessionInput& input) { return Gather(lifecycle_.Transition(input)); }
  void CreateLive(absl::Time sent) { Do(SessionCreated{"s1", sent, std::nullopt}); }
  Asked RenewFailed(absl::Time now) { return Do(SessionRenewFailed{"s1", now, "no leader"}); }
};

TEST_F(SessionLifecycleTest, TheFirstSessionIsLiveConnectedAndStartsTheRenewer) {
  const Asked effects = Do(SessionCreated{"s1", kT0, std::nullopt});

  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);
  EXPECT_EQ(lifecycle_.session(), "s1");
  EXPECT_EQ(effects.created, (AnnounceCreated{"s1", /*first=*/true}));
  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kConnected));
  EXPECT_TRUE(effects.start_renewer);
  EXPECT_FALSE(effects.restore);
  EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(10));
}

TEST_F(SessionLifecycleTest, AFirstSessionMadeDuringAnOutageIsCheckedBeforeItCountsAsLive) {
  const Asked effects = Do(SessionCreated{"s1", kT0, ConnectionState::kSuspended});

  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kSuspended);
  EXPECT_THAT(effects.publish, IsEmpty());
  EXPECT_TRUE(effects.wake_renewer);
  EXPECT_EQ(lifecycle_.Next(kT0).kind, Kind::kRenew);
  EXPECT_THAT(Do(SessionRenewed{"s1", kT0}).publish, ElementsAre(ConnectionState::kReconnected));
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
  Do(SessionRenewed{"s1", kT0 + absl::Seconds(5)});  // answered late: the send time counts

  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(7)).until, kT0 + absl::Seconds(10));
  EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(15));
}

TEST_F(SessionLifecycleTest, TheRenewalBudgetEndsAtTheLossDeadline) {
  CreateLive(kT0);
  RenewFailed(kT0 + absl::Seconds(5));
  const SessionStep step = lifecycle_.Next(kT0 + absl::Milliseconds(9300));

  ASSERT_EQ(step.kind, Kind::kRenew);
  EXPECT_EQ(step.budget, absl::Milliseconds(700));
}

TEST_F(SessionLifecycleTest, AFailedRenewalSuspendsOnceAndRetriesNoLaterThanTheDeadline) {
  CreateLive(kT0);
  Asked first = RenewFailed(kT0 + absl::Seconds(5));
  EXPECT_THAT(first.publish, ElementsAre(ConnectionState::kSuspended));
  EXPECT_THAT(first.notes, ElementsAre(Note{LogLevel::kWarn,
                                            "renewing the instance session failed: no leader"}));
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(5)).until, kT0 + absl::Seconds(6));

  Asked second = RenewFailed(kT0 + absl::Seconds(6));
  EXPECT_THAT(second.publish, IsEmpty());
  EXPECT_THAT(second.notes, IsEmpty());  // said once

  // A retry that would come after the deadline comes at it.
  RenewFailed(kT0 + absl::Milliseconds(9500));
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Milliseconds(9500)).until, kT0 + absl::Seconds(10));
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kSuspended);
}

TEST_F(SessionLifecycleTest, ARenewalThatSucceedsAfterFailuresReconnects) {
  CreateLive(kT0);
  RenewFailed(kT0 + absl::Seconds(5));
  const Asked effects = Do(SessionRenewed{"s1", kT0 + absl::Seconds(6)});

  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kReconnected));
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);
  EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(16));
}

TEST_F(SessionLifecycleTest, NoFailureMovesTheLossDeadline) {
  CreateLive(kT0);
  for (int second = 5; second < 10; ++second) {
    RenewFailed(kT0 + absl::Seconds(second));
    EXPECT_EQ(lifecycle_.loss_deadline(), kT0 + absl::Seconds(10));
  }
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(10)).kind, Kind::kDeclareLost);

  const Asked effects = RenewFailed(kT0 + absl::Seconds(10));
  ASSERT_TRUE(effects.lost.has_value());
  EXPECT_EQ(effects.lost->session, "s1");
  EXPECT_TRUE(effects.lost->maybe_alive);  // the clock decided: the server may still have it
  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kLost));
  EXPECT_EQ(lifecycle_.session(), "");
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(10)).kind, Kind::kCreate);
}

TEST_F(SessionLifecycleTest, AFirstFailureAtTheDeadlinePublishesSuspendedThenLost) {
  CreateLive(kT0);
  const Asked effects = RenewFailed(kT0 + absl::Seconds(11));

  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kSuspended, ConnectionState::kLost));
  EXPECT_TRUE(effects.lost.has_value());
}

TEST_F(SessionLifecycleTest, ARenewerThatRunsLateDeclaresTheSessionLostAtTheDeadline) {
  CreateLive(kT0);
  EXPECT_THAT(Do(LossDeadlinePassed{kT0 + absl::Seconds(9)}).publish, IsEmpty());  // not yet

  const SessionStep step = lifecycle_.Next(kT0 + absl::Seconds(12));
  ASSERT_EQ(step.kind, Kind::kDeclareLost);
  const Asked effects = Do(LossDeadlinePassed{kT0 + absl::Seconds(12)});
  ASSERT_TRUE(effects.lost.has_value());
  EXPECT_TRUE(effects.lost->maybe_alive);
}

TEST_F(SessionLifecycleTest, ASessionTheServerDoesNotKnowIsLostAndNotMaybeAlive) {
  CreateLive(kT0);
  const Asked effects = Do(SessionUnknownToServer{"s1"});

  ASSERT_TRUE(effects.lost.has_value());
  EXPECT_FALSE(effects.lost->maybe_alive);
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLost);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kCreate);
}

TEST_F(SessionLifecycleTest, AnAnswerAboutASessionGivenUpChangesNothing) {
  CreateLive(kT0);
  Do(SessionUnknownToServer{"s1"});

  EXPECT_THAT(Do(SessionRenewed{"s1", kT0 + absl::Seconds(1)}).publish, IsEmpty());
  EXPECT_FALSE(Do(SessionUnknownToServer{"s1"}).lost.has_value());
  EXPECT_FALSE(RenewFailed(kT0 + absl::Seconds(30)).lost.has_value());
  EXPECT_FALSE(Do(SessionReportedInvalid{"s1", kT0}).wake_renewer);
  EXPECT_EQ(lifecycle_.session(), "");
}

TEST_F(SessionLifecycleTest, AReplacementSessionRestoresTheKeysThenReconnects) {
  CreateLive(kT0);
  Do(SessionUnknownToServer{"s1"});
  const Asked created = Do(SessionCreated{"s2", kT0 + absl::Seconds(2), std::nullopt});

  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kRestoring);
  EXPECT_TRUE(created.restore);
  EXPECT_FALSE(created.start_renewer);  // the renewer runs already
  EXPECT_THAT(created.publish, IsEmpty());
  EXPECT_THAT(Do(KeysRestored{}).publish, ElementsAre(ConnectionState::kReconnected));
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);
  EXPECT_THAT(Do(KeysRestored{}).publish, IsEmpty());
}

TEST_F(SessionLifecycleTest, CreateFailuresBackOffByTheirNumberInARow) {
  CreateLive(kT0);
  Do(SessionUnknownToServer{"s1"});
  std::vector<int> asked;
  auto backoff = [&asked](int failures) {
    asked.push_back(failures);
    return absl::Seconds(failures);
  };
  backoff_ = backoff;
  EXPECT_THAT(Do(SessionCreateFailed{kT0, "refused"}).notes,
              ElementsAre(Note{LogLevel::kWarn, "creating the instance session failed: refused"}));
  EXPECT_THAT(Do(SessionCreateFailed{kT0 + absl::Seconds(1), "refused"}).notes, IsEmpty());
  EXPECT_THAT(asked, ElementsAre(1, 2));
  const SessionStep step = lifecycle_.Next(kT0 + absl::Seconds(2));
  EXPECT_EQ(step.kind, Kind::kWait);
  EXPECT_EQ(step.until, kT0 + absl::Seconds(3));

  Do(SessionCreated{"s2", kT0 + absl::Seconds(3), std::nullopt});
  Do(SessionUnknownToServer{"s2"});
  Do(SessionCreateFailed{kT0 + absl::Seconds(4), "refused"});
  EXPECT_THAT(asked, ElementsAre(1, 2, 1));  // a success ends the run
}

TEST_F(SessionLifecycleTest, TheFirstCreateFailingIsTheCallersErrorAndSchedulesNothing) {
  EXPECT_THAT(Do(SessionCreateFailed{kT0, "refused"}).notes, IsEmpty());
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kNone);
  EXPECT_EQ(lifecycle_.Next(kT0).until, absl::InfiniteFuture());
}

TEST_F(SessionLifecycleTest, AnUnreachableServerSuspendsALiveSessionAndChecksItNow) {
  EXPECT_THAT(Do(StoreReachability{false, kT0, std::nullopt}).publish,
              IsEmpty());  // no session: not its business
  CreateLive(kT0);
  const Asked effects = Do(StoreReachability{false, kT0 + absl::Seconds(1), std::nullopt});

  EXPECT_THAT(effects.publish, ElementsAre(ConnectionState::kSuspended));
  EXPECT_TRUE(effects.wake_renewer);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kRenew);
  EXPECT_THAT(Do(StoreReachability{false, kT0 + absl::Seconds(2), std::nullopt}).publish,
              IsEmpty());
}

TEST_F(SessionLifecycleTest, ALockCanHaveOnlyTheLiveSessionCheckedAtOnce) {
  CreateLive(kT0);
  EXPECT_FALSE(Do(SessionReportedInvalid{"other", kT0 + absl::Seconds(1)}).wake_renewer);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kWait);

  EXPECT_TRUE(Do(SessionReportedInvalid{"s1", kT0 + absl::Seconds(1)}).wake_renewer);
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Seconds(1)).kind, Kind::kRenew);
  EXPECT_EQ(lifecycle_.phase(), SessionPhase::kLive);  // checked, not suspended
}

TEST_F(SessionLifecycleTest, AbandonHandsOverTheLiveSessionAndSchedulesNothing) {
  CreateLive(kT0);
  EXPECT_EQ(lifecycle_.Abandon(), "s1");
  EXPECT_EQ(lifecycle_.session(), "");
  EXPECT_EQ(lifecycle_.Next(kT0 + absl::Hours(1)).until, absl::InfiniteFuture());
}

TEST_F(SessionLifecycleTest, ALossTellsTheObserversBeforeTheListenersHearLost) {
  CreateLive(kT0);
  // The first failure comes after the deadline: suspended and lost at once.
  EXPECT_THAT(lifecycle_.Transition(SessionRenewFailed{"s1", kT0 + absl::Seconds(11), "no leader"}),
              ElementsAre(SessionAction(Note{LogLevel::kWarn,
                                             "renewing the instance session failed: no leader"}),
                          SessionAction(AnnounceLost{"s1", /*maybe_alive=*/true}),
                          SessionAction(PublishState{ConnectionState::kSuspended}),
                          SessionAction(PublishState{ConnectionState::kLost})));
  EXPECT_THAT(lifecycle_.Transition(SessionCreated{"s2", kT0 + absl::Seconds(12), std::nullopt}),
              ElementsAre(SessionAction(AnnounceCreated{"s2", /*first=*/false}),
                          SessionAction(RestoreKeys{})));
}

TEST_F(SessionLifecycleTest, BeforeTheFirstSessionTheReportsAloneMakeTheConnectionState) {
  EXPECT_THAT(Do(StoreReachability{true, kT0, std::nullopt}).publish,
              ElementsAre(ConnectionState::kConnected));
  const Asked down = Do(StoreReachability{false, kT0, ConnectionState::kConnected});
  EXPECT_THAT(down.publish, ElementsAre(ConnectionState::kSuspended));
  EXPECT_THAT(down.notes, ElementsAre(Note{LogLevel::kWarn, "Consul cannot be reached"}));
  EXPECT_THAT(Do(StoreReachability{true, kT0, ConnectionState::kSuspended}).publish,
              ElementsAre(ConnectionState::kReconnected));
  EXPECT_THAT(Do(StoreReachability{true, kT0, ConnectionState::kReconnected}).publish, IsEmpty());
  EXPECT_FALSE(Do(StoreReachability{false, kT0, std::nullopt}).wake_renewer);  // nothing to check
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
      SessionLifecycle lifecycle(
          SessionRules{.ttl = kTtl,
                       .hold_deadline = deadline,
                       .renew_retry = [&millis] { return millis(1000); },
                       .create_backoff = [](int) { return absl::Milliseconds(300); }});
      absl::Time now = kT0;
      absl::Time last_success = now;
      lifecycle.Transition(SessionCreated{"s0", now, std::nullopt});
      int sessions = 1;
      for (int round = 0; round < 400; ++round) {
        SCOPED_TRACE(testing::Message() << "round " << round);
        const int outside = std::uniform_int_distribution<int>(0, 9)(random);
        if (outside == 0) lifecycle.Transition(StoreReachability{false, now, std::nullopt});
        if (outside == 1) lifecycle.Transition(SessionReportedInvalid{lifecycle.session(), now});
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
            ASSERT_FALSE(
                Gather(lifecycle.Transition(LossDeadlinePassed{now})).lost->session.empty());
            break;
          case Kind::kCreate: {
            const absl::Time sent = now;
            now += millis(3000);
            if (std::uniform_int_distribution<int>(0, 2)(random) == 0) {
              lifecycle.Transition(SessionCreateFailed{now, "refused"});
            } else {
              lifecycle.Transition(
                  SessionCreated{"s" + std::to_string(sessions++), sent, std::nullopt});
              last_success = sent;
              lifecycle.Transition(KeysRestored{});
            }
            break;
          }
          case Kind::kRenew: {
            ASSERT_LE(now + step.budget, last_success + deadline.loss_after);
            const absl::Time sent = now;
            const int answer = std::uniform_int_distribution<int>(0, 9)(random);
            now += std::min(step.budget, millis(4000));  // the call is cut at its budget
            if (answer < 5 && now - sent < step.budget) {
              lifecycle.Transition(SessionRenewed{step.session, sent});
              last_success = sent;
            } else if (answer == 5) {
              lifecycle.Transition(SessionUnknownToServer{step.session});
            } else {
              lifecycle.Transition(SessionRenewFailed{step.session, now, "timed out"});
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
