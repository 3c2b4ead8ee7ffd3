// SPDX-License-Identifier: Apache-2.0
// integration/testing/state_recorder.h
//
// StateRecorder records the connection states a repository reports, for tests that wait (with a
// deadline, never a sleep) until a sequence of them has happened.
//
// Thread safety: the listener may be called from any thread while tests read and wait.
#ifndef INTEGRATION_TESTING_STATE_RECORDER_H_
#define INTEGRATION_TESTING_STATE_RECORDER_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "integration/testing/server_test.h"
#include "registry/repository.h"

namespace registry::testing {

class StateRecorder {
 public:
  // A listener appending to this recorder, which must outlive the repository that calls it.
  Repository::ConnectionListener Listener();
  // Waits until `expected` occurs, in order, as a subsequence of the recorded states.
  bool AwaitSequence(const std::vector<ConnectionState>& expected,
                     absl::Duration timeout = kPatience);
  std::vector<ConnectionState> states();

 private:
  absl::Mutex mu_;
  std::vector<ConnectionState> states_ ABSL_GUARDED_BY(mu_);
};

// "CONNECTED,SUSPENDED,...".
std::string StatesToString(const std::vector<ConnectionState>& states);

}  // namespace registry::testing

#endif  // INTEGRATION_TESTING_STATE_RECORDER_H_
