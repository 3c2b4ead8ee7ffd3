// SPDX-License-Identifier: Apache-2.0
// repository/connection_publisher.cc
#include "repository/connection_publisher.h"

#include <utility>

#include "base/log.h"
#include "repository/session_metrics.h"

namespace registry {
namespace {

ConnectionStateLabel StateLabelOf(const std::optional<ConnectionState>& state) {
  if (!state.has_value()) return ConnectionStateLabel::kConnecting;
  switch (*state) {
    case ConnectionState::kConnected:
      return ConnectionStateLabel::kConnected;
    case ConnectionState::kSuspended:
      return ConnectionStateLabel::kSuspended;
    case ConnectionState::kLost:
      return ConnectionStateLabel::kLost;
    case ConnectionState::kReconnected:
      return ConnectionStateLabel::kReconnected;
  }
  return ConnectionStateLabel::kConnecting;
}

}  // namespace

ConnectionPublisher::ConnectionPublisher(SerialExecutor& executor) : executor_(executor) {
  absl::MutexLock lock(&mu_);
  CountLocked(+1);  // connecting, until Close()
}

ConnectionPublisher::~ConnectionPublisher() { Close(); }

void ConnectionPublisher::CountLocked(int delta) {
  SessionMetrics().connection_state.At({metrics::Index(StateLabelOf(state_))}).Add(delta);
}

void ConnectionPublisher::Publish(ConnectionState state) {
  absl::MutexLock lock(&mu_);
  if (closed_ || state_ == state) return;
  CountLocked(-1);
  state_ = state;
  CountLocked(+1);
  QueueLocked(state);
}

void ConnectionPublisher::PublishSessionEvent(InstanceSession::Event event) {
  absl::MutexLock lock(&mu_);
  if (!closed_) QueueLocked(std::move(event));
}

std::optional<ConnectionState> ConnectionPublisher::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void ConnectionPublisher::Close() {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  closed_ = true;
  CountLocked(-1);
  events_.clear();
}

void ConnectionPublisher::QueueLocked(Event event) {
  events_.push_back(std::move(event));
  if (delivering_) return;
  delivering_ = true;
  // The executor only queues the task: no call runs under mu_.
  if (!executor_.Post([this] { Deliver(); })) {
    delivering_ = false;
    Log(LogLevel::kWarn, "session",
        "a connection event was not delivered: the repository is closing");
  }
}

void ConnectionPublisher::Deliver() {
  absl::MutexLock lock(&mu_);
  while (!events_.empty() && !closed_) {
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
  delivering_ = false;  // events queued from now on schedule a new delivery
}

int ConnectionPublisher::AddConnectionListener(Repository::ConnectionListener listener) {
  return listeners_.Add(std::move(listener));
}

void ConnectionPublisher::RemoveConnectionListener(int id) { listeners_.Remove(id); }

int ConnectionPublisher::AddSessionObserver(InstanceSession::Observer observer) {
  return observers_.Add(std::move(observer));
}

void ConnectionPublisher::RemoveSessionObserver(int id) { observers_.Remove(id); }

}  // namespace registry
