// repository/session_keeper_events.cc
//
// SessionKeeper's connection states and the delivery of its events: the state machine's
// published side (what listeners hear, from the session and from every call's reachability)
// and the ordered tasks that call observers, then listeners, with no lock held.
#include <utility>

#include "base/log.h"
#include "repository/session_keeper.h"

namespace registry {

void SessionKeeper::PublishLocked(ConnectionState state) {
  if (last_state_ == state) return;
  last_state_ = state;
  QueueEventLocked(state);
}

void SessionKeeper::ReportReachable(bool reachable) {
  const int value = reachable ? 1 : 0;
  if (reachability_.exchange(value, std::memory_order_acq_rel) == value) return;
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  // The latest report, not this one: two reporters may take mu_ in either order.
  reachable = reachability_.load(std::memory_order_acquire) == 1;
  if (phase_ == Phase::kNone) {
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
  if (!reachable && phase_ == Phase::kLive) {
    phase_ = Phase::kSuspended;
    PublishLocked(ConnectionState::kSuspended);
    Log(LogLevel::kWarn, "session", "Consul cannot be reached; checking the instance session");
    WakeRenewerLocked();
  }
}

void SessionKeeper::QueueEventLocked(Event event) {
  events_.push_back(std::move(event));
  if (draining_ || stopping_) return;
  draining_ = true;
  if (!executor_([this] { Drain(); })) {
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
