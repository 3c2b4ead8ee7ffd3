// SPDX-License-Identifier: Apache-2.0
// repository/session_keeper_reachability.cc
//
// SessionKeeper's side of the connection state: what every call's and watch's reachability
// makes it publish (the publisher, connection_publisher.h, delivers it).
#include <optional>
#include <utility>

#include "base/log.h"
#include "base/monotonic.h"
#include "repository/session_keeper.h"

namespace registry {

void SessionKeeper::ReportReachable(bool reachable) {
  const int value = reachable ? 1 : 0;
  if (reachability_.exchange(value, std::memory_order_acq_rel) == value) return;
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  // The latest report, not this one: two reporters may take mu_ in either order.
  reachable = reachability_.load(std::memory_order_acquire) == 1;
  if (lifecycle_.phase() == SessionPhase::kNone) {
    // Only the keeper publishes, always under mu_: the state read here stays the last one.
    const std::optional<ConnectionState> last = publisher_.state();
    if (reachable && !last.has_value()) {
      publisher_.Publish(ConnectionState::kConnected);
    } else if (reachable && *last == ConnectionState::kSuspended) {
      publisher_.Publish(ConnectionState::kReconnected);
    } else if (!reachable && last.has_value()) {
      publisher_.Publish(ConnectionState::kSuspended);
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

}  // namespace registry
