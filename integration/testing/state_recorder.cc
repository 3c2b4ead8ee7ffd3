// SPDX-License-Identifier: Apache-2.0
// integration/testing/state_recorder.cc
#include "integration/testing/state_recorder.h"

#include "absl/strings/str_join.h"

namespace registry::testing {

Repository::ConnectionListener StateRecorder::Listener() {
  return [this](ConnectionState state) {
    absl::MutexLock lock(&mu_);
    states_.push_back(state);
  };
}

bool StateRecorder::AwaitSequence(const std::vector<ConnectionState>& expected,
                                  absl::Duration timeout) {
  auto seen = [this, &expected]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    size_t matched = 0;
    for (ConnectionState state : states_) {
      if (matched < expected.size() && state == expected[matched]) ++matched;
    }
    return matched == expected.size();
  };
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&seen), timeout);
}

std::vector<ConnectionState> StateRecorder::states() {
  absl::MutexLock lock(&mu_);
  return states_;
}

std::string StatesToString(const std::vector<ConnectionState>& states) {
  return absl::StrJoin(states, ",", [](std::string* out, ConnectionState state) {
    out->append(ConnectionStateName(state));
  });
}

}  // namespace registry::testing
