// SPDX-License-Identifier: Apache-2.0
#include "repository/session_lifecycle.h"

#include <algorithm>
#include <utility>

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

SessionEffects SessionLifecycle::Created(std::string id, absl::Time sent,
                                         std::optional<ConnectionState> published) {
  SessionEffects effects;
  const bool first = phase_ == SessionPhase::kNone;
  session_ = std::move(id);
  effects.created = session_;
  // The server started the session's timer when it applied the create, after `sent`: counting
  // from the reply instead would stretch the hold by however long the create took.
  last_renewed_ = sent;
  next_renew_ = std::min(sent + ttl_ / 2, loss_deadline());
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
  if (!published.has_value()) {
    effects.publish.push_back(ConnectionState::kConnected);
  } else if (*published == ConnectionState::kSuspended) {
    phase_ = SessionPhase::kSuspended;  // RECONNECTED once a renewal confirms the session
    next_renew_ = sent;
    effects.check_now = true;
  }
  return effects;
}

SessionEffects SessionLifecycle::CreateFailed(absl::Time now,
                                              absl::FunctionRef<absl::Duration(int)> backoff) {
  SessionEffects effects;
  if (phase_ != SessionPhase::kLost) return effects;  // the first create: the caller's error
  ++create_failures_;
  next_create_ = now + backoff(create_failures_);
  effects.log_create_failure = create_failures_ == 1;
  return effects;
}

SessionEffects SessionLifecycle::Renewed(const std::string& id, absl::Time sent) {
  SessionEffects effects;
  if (id.empty() || id != session_) return effects;  // an answer about a session given up
  last_renewed_ = std::max(last_renewed_, sent);
  next_renew_ = std::min(sent + ttl_ / 2, loss_deadline());
  if (phase_ == SessionPhase::kSuspended) {
    phase_ = SessionPhase::kLive;
    effects.publish.push_back(ConnectionState::kReconnected);
  }
  return effects;
}

SessionEffects SessionLifecycle::RenewRefused(const std::string& id) {
  if (id.empty() || id != session_) return {};
  // No clock is needed: the next create is due at once.
  return Lose(absl::InfinitePast(), /*maybe_alive=*/false);
}

SessionEffects SessionLifecycle::RenewFailed(const std::string& id, absl::Time now,
                                             absl::Duration retry) {
  SessionEffects effects;
  if (id.empty() || id != session_) return effects;
  if (phase_ == SessionPhase::kLive) {
    phase_ = SessionPhase::kSuspended;
    effects.publish.push_back(ConnectionState::kSuspended);
    effects.suspended = true;
  }
  // SAFETY: no failure moves the deadline; only a renewal that succeeded does.
  if (now >= loss_deadline()) {
    SessionEffects lost = Lose(now, /*maybe_alive=*/true);
    lost.publish.insert(lost.publish.begin(), effects.publish.begin(), effects.publish.end());
    lost.suspended = effects.suspended;
    return lost;
  }
  next_renew_ = std::min(now + retry, loss_deadline());
  return effects;
}

SessionEffects SessionLifecycle::Expired(absl::Time now) {
  if (session_.empty() || now < loss_deadline()) return {};
  return Lose(now, /*maybe_alive=*/true);
}

SessionEffects SessionLifecycle::Unreachable(absl::Time now) {
  SessionEffects effects;
  if (phase_ != SessionPhase::kLive) return effects;
  phase_ = SessionPhase::kSuspended;
  effects.publish.push_back(ConnectionState::kSuspended);
  effects.suspended = true;
  next_renew_ = std::min(next_renew_, now);
  effects.check_now = true;
  return effects;
}

SessionEffects SessionLifecycle::CheckNow(const std::string& id, absl::Time now) {
  SessionEffects effects;
  if (id.empty() || id != session_) return effects;
  next_renew_ = std::min(next_renew_, now);
  effects.check_now = true;
  return effects;
}

SessionEffects SessionLifecycle::RestoreDone() {
  SessionEffects effects;
  if (phase_ != SessionPhase::kRestoring) return effects;
  phase_ = SessionPhase::kLive;
  effects.publish.push_back(ConnectionState::kReconnected);
  return effects;
}

std::string SessionLifecycle::Abandon() {
  phase_ = SessionPhase::kLost;
  last_renewed_ = absl::InfinitePast();
  next_renew_ = absl::InfiniteFuture();
  next_create_ = absl::InfiniteFuture();
  return std::exchange(session_, "");
}

SessionEffects SessionLifecycle::Lose(absl::Time now, bool maybe_alive) {
  SessionEffects effects;
  effects.lost = SessionEffects::Loss{std::exchange(session_, ""), maybe_alive};
  effects.publish.push_back(ConnectionState::kLost);
  phase_ = SessionPhase::kLost;
  last_renewed_ = absl::InfinitePast();
  next_renew_ = absl::InfiniteFuture();
  next_create_ = now;  // at once
  return effects;
}

}  // namespace registry
