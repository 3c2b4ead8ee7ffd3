// SPDX-License-Identifier: Apache-2.0
// repository/session_keeper_events.cc
//
// SessionKeeper's connection states and the delivery of its events: the state machine's
// published side (what listeners hear, from the session and from every call's reachability)
// and the ordered tasks that call observers, then listeners, with no lock held.
#include <optional>
#include <utility>

#include "base/log.h"
#include "base/monotonic.h"
#include "base/plugin_metrics.h"
#include "repository/session_keeper.h"

namespace registry {

namespace {

metrics::StateLabel StateLabelOf(const std::optional<ConnectionState>& state) {
  if (!state.has_value()) return metrics::StateLabel::kConnecting;
  switch (*state) {
    case ConnectionState::kConnected:
      return metrics::StateLabel::kConnected;
    case ConnectionState::kSuspended:
      return metrics::StateLabel::kSuspended;
    case ConnectionState::kLost:
      return metrics::StateLabel::kLost;
    case ConnectionState::kReconnected:
      return metrics::StateLabel::kReconnected;
  }
  return metrics::StateLabel::kConnecting;
}

}  // namespace

void SessionKeeper::CountStateLocked(int delta) {
  metrics::Metrics().connection_state.At({metrics::Index(StateLabelOf(last_state_))}).Add(delta);
}

void SessionKeeper::PublishLocked(ConnectionState state) {
  if (last_state_ == state) return;
  if (!stopping_) CountStateLocked(-1);
  last_state_ = state;
  if (!stopping_) CountStateLocked(+1);
  QueueEventLocked(state);
}

void SessionKeeper::ReportReachable(bool reachable) {
  const int value = reachable ? 1 : 0;
  if (reachability_.exchange(value, std::memory_order_acq_rel) == value) return;
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  // The latest report, not this one: two reporters may take mu_ in either order.
  reachable = reachability_.load(std::memory_order_acquire) == 1;
  if (lifecycle_.phase() == SessionPhase::kNone) {
    if (reachable && !last_state_.has_value()) {
      PublishLocked(ConnectionState::kConnected);
    } else if (reachable && *last_state_ == ConnectionState::kSuspended) {
      PublishLocked(ConnectionState::kReconnected);
    } else if (!reachable && last_state_.has_value()) {
      PublishLocked(ConnectionState::kSuspended);
      Log(LogLevel::kWarn, "repository", "Consul cannot be reached");
    }
    return;
  }
  if (reachable) return;
  SessionEffects effects = lifecycle_.Unreachable(MonotonicNow());
  if (effects.suspended) {
    Log(LogLevel::kWarn, "session", "Consul cannot be reached; checking the instance session");
  }
  ApplyLocked(std::move(effects));
}

void SessionKeeper::QueueEventLocked(Event event) {
  events_.push_back(std::move(event));
  if (draining_ || stopping_) return;
  draining_ = true;
  if (!executor_.Post([this] { Drain(); })) {
    draining_ = false;
    Log(LogLevel::kWarn, "session",
        "a connection event was not delivered: the repository is closing");
  }
}

void SessionKeeper::Drain() {
  absl::MutexLock lock(&mu_);
  DeliverEventsLocked();
  draining_ = false;  // events queued from now on schedule a new drain
}

void SessionKeeper::DeliverEventsLocked() {
  while (!events_.empty() && !stopping_) {
    Event event = std::move(events_.front());
    events_.pop_front();
    mu_.Unlock();
    if (const auto* state = std::get_if<ConnectionState>(&event)) {
      listeners_.Notify(*state);
    } else {
      observers_.Notify(std::get<InstanceSession::Event>(event));
    }
    mu_.Lock();
  }
}

int SessionKeeper::AddConnectionListener(Repository::ConnectionListener listener) {
  return listeners_.Add(std::move(listener));
}

void SessionKeeper::RemoveConnectionListener(int id) { listeners_.Remove(id); }

int SessionKeeper::AddSessionObserver(Observer observer) {
  return observers_.Add(std::move(observer));
}

void SessionKeeper::RemoveSessionObserver(int id) { observers_.Remove(id); }

}  // namespace registry
