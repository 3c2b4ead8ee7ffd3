// SPDX-License-Identifier: Apache-2.0
#include "repository/session_lifecycle.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace registry {

SessionStep SessionLifecycle::Next(absl::Time now) const {
  SessionStep step;
  if (!session_.empty()) {
    // SAFETY: the loss deadline is the deadline, however late this thread runs.
    if (now >= loss_deadline()) {
      step.kind = SessionStep::Kind::kDeclareLost;
      return step;
    }
    if (now >= next_renew_) {
      step.kind = SessionStep::Kind::kRenew;
      step.session = session_;
      // The call may take until the loss deadline, and no longer.
      step.budget = loss_deadline() - now;
      return step;
    }
    step.until = next_renew_;
    return step;
  }
  if (phase_ == SessionPhase::kLost) {
    if (now >= next_create_) {
      step.kind = SessionStep::Kind::kCreate;
      return step;
    }
    step.until = next_create_;
  }
  return step;
}

std::vector<SessionAction> SessionLifecycle::Transition(const SessionInput& input) {
  return ToActions(std::visit([this](const auto& in) { return On(in); }, input));
}

std::vector<SessionAction> SessionLifecycle::ToActions(Effects effects) {
  std::vector<SessionAction> actions;
  for (Note& line : effects.log) actions.emplace_back(std::move(line));
  // Observers (locks) first, then listeners: a listener hearing of a session finds it known, and
  // held locks are marked lost before a listener hears LOST.
  if (effects.created.has_value()) actions.emplace_back(*std::move(effects.created));
  if (effects.lost.has_value()) actions.emplace_back(*std::move(effects.lost));
  for (ConnectionState state : effects.publish) actions.emplace_back(PublishState{state});
  if (effects.restore) actions.emplace_back(RestoreKeys{});
  if (effects.wake_renewer) actions.emplace_back(WakeRenewer{});
  if (effects.start_renewer) actions.emplace_back(StartRenewer{});
  return actions;
}

SessionLifecycle::Effects SessionLifecycle::On(const SessionCreated& input) {
  Effects effects;
  const bool first = phase_ == SessionPhase::kNone;
  session_ = input.id;
  effects.created = AnnounceCreated{session_, first};
  // The server started the session's timer when it applied the create, after `sent`: counting
  // from the reply instead would stretch the hold by however long the create took.
  last_renewed_ = input.sent;
  next_renew_ = std::min(input.sent + rules_.ttl / 2, loss_deadline());
  next_create_ = absl::InfiniteFuture();
  create_failures_ = 0;
  if (!first) {
    phase_ = SessionPhase::kRestoring;  // RECONNECTED once every remembered key is bound again
    effects.restore = true;
    return effects;
  }
  effects.start_renewer = true;
  phase_ = SessionPhase::kLive;
  // Calls before the session may have told the state already (Unreachable without a session).
  if (!input.published.has_value()) {
    effects.publish.push_back(ConnectionState::kConnected);
  } else if (*input.published == ConnectionState::kSuspended) {
    phase_ = SessionPhase::kSuspended;  // RECONNECTED once a renewal confirms the session
    next_renew_ = input.sent;
    effects.wake_renewer = true;
  }
  return effects;
}

SessionLifecycle::Effects SessionLifecycle::On(const SessionCreateFailed& input) {
  Effects effects;
  if (phase_ != SessionPhase::kLost) return effects;  // the first create: the caller's error
  ++create_failures_;
  next_create_ = input.now + rules_.create_backoff(create_failures_);
  if (create_failures_ == 1) {
    effects.log.push_back(
        {LogLevel::kWarn, absl::StrCat("creating the instance session failed: ", input.error)});
  }
  return effects;
}

SessionLifecycle::Effects SessionLifecycle::On(const SessionRenewed& input) {
  Effects effects;
  if (input.id.empty() || input.id != session_) return effects;  // a session given up
  last_renewed_ = std::max(last_renewed_, input.sent);
  next_renew_ = std::min(input.sent + rules_.ttl / 2, loss_deadline());
  if (phase_ == SessionPhase::kSuspended) {
    phase_ = SessionPhase::kLive;
    effects.publish.push_back(ConnectionState::kReconnected);
  }
  return effects;
}

SessionLifecycle::Effects SessionLifecycle::On(const SessionUnknownToServer& input) {
  if (input.id.empty() || input.id != session_) return {};
  // No clock is needed: the next create is due at once.
  return Lose(absl::InfinitePast(), /*maybe_alive=*/false);
}

SessionLifecycle::Effects SessionLifecycle::On(const SessionRenewFailed& input) {
  Effects effects;
  if (input.id.empty() || input.id != session_) return effects;
  if (phase_ == SessionPhase::kLive) {
    phase_ = SessionPhase::kSuspended;
    effects.publish.push_back(ConnectionState::kSuspended);
    effects.log.push_back(
        {LogLevel::kWarn, absl::StrCat("renewing the instance session failed: ", input.error)});
  }
  // SAFETY: no failure moves the deadline; only a renewal that succeeded does.
  if (input.now >= loss_deadline()) {
    Effects lost = Lose(input.now, /*maybe_alive=*/true);
    lost.publish.insert(lost.publish.begin(), effects.publish.begin(), effects.publish.end());
    lost.log = std::move(effects.log);
    return lost;
  }
  next_renew_ = std::min(input.now + rules_.renew_retry(), loss_deadline());
  return effects;
}

SessionLifecycle::Effects SessionLifecycle::On(const LossDeadlinePassed& input) {
  if (session_.empty() || input.now < loss_deadline()) return {};
  return Lose(input.now, /*maybe_alive=*/true);
}

SessionLifecycle::Effects SessionLifecycle::On(const StoreReachability& input) {
  Effects effects;
  if (phase_ == SessionPhase::kNone) {  // no session: the reports make the connection state
    const std::optional<ConnectionState>& last = input.published;
    if (input.reachable && !last.has_value()) {
      effects.publish.push_back(ConnectionState::kConnected);
    } else if (input.reachable && *last == ConnectionState::kSuspended) {
      effects.publish.push_back(ConnectionState::kReconnected);
    } else if (!input.reachable && last.has_value()) {
      effects.publish.push_back(ConnectionState::kSuspended);
      effects.log.push_back({LogLevel::kWarn, "Consul cannot be reached"});
    }
    return effects;
  }
  // With a session, an outage makes a live session suspended and has it checked at once; the
  // check decides what follows (RECONNECTED, or LOST).
  if (input.reachable || phase_ != SessionPhase::kLive) return effects;
  phase_ = SessionPhase::kSuspended;
  effects.publish.push_back(ConnectionState::kSuspended);
  effects.log.push_back(
      {LogLevel::kWarn, "Consul cannot be reached; checking the instance session"});
  next_renew_ = std::min(next_renew_, input.now);
  effects.wake_renewer = true;
  return effects;
}

SessionLifecycle::Effects SessionLifecycle::On(const SessionReportedInvalid& input) {
  Effects effects;
  if (input.id.empty() || input.id != session_) return effects;
  next_renew_ = std::min(next_renew_, input.now);
  effects.wake_renewer = true;
  return effects;
}

SessionLifecycle::Effects SessionLifecycle::On(const KeysRestored&) {
  Effects effects;
  if (phase_ != SessionPhase::kRestoring) return effects;
  phase_ = SessionPhase::kLive;
  effects.publish.push_back(ConnectionState::kReconnected);
  effects.log.push_back(
      {LogLevel::kInfo, absl::StrCat("every ephemeral key is bound to session ", session_)});
  return effects;
}

std::string SessionLifecycle::Abandon() {
  phase_ = SessionPhase::kLost;
  last_renewed_ = absl::InfinitePast();
  next_renew_ = absl::InfiniteFuture();
  next_create_ = absl::InfiniteFuture();
  return std::exchange(session_, "");
}

SessionLifecycle::Effects SessionLifecycle::Lose(absl::Time now, bool maybe_alive) {
  Effects effects;
  effects.lost = AnnounceLost{std::exchange(session_, ""), maybe_alive};
  effects.publish.push_back(ConnectionState::kLost);
  phase_ = SessionPhase::kLost;
  last_renewed_ = absl::InfinitePast();
  next_renew_ = absl::InfiniteFuture();
  next_create_ = now;  // at once
  return effects;
}

}  // namespace registry
