// SPDX-License-Identifier: Apache-2.0
// base/monotonic.h
//
// Time that does not follow the wall clock, for schedules that must keep their pace when the
// system clock is stepped (session renewal, the pauses between retries): MonotonicNow() and
// WakeupSignal.
//
// absl::Mutex's timed waits take wall-clock deadlines (a wait for "500 ms" lasts an hour when the
// clock steps back an hour meanwhile), so a thread that sleeps until a monotonic deadline waits
// on a WakeupSignal (std::condition_variable on the steady clock) instead.
//
// Thread safety: MonotonicNow() is; WakeupSignal's methods may be called from any thread.
#ifndef BASE_MONOTONIC_H_
#define BASE_MONOTONIC_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/time/time.h"

namespace registry {

// The steady clock as an absl::Time. Only differences and comparisons between values of
// MonotonicNow() mean anything; never mix them with absl::Now().
inline absl::Time MonotonicNow() {
  return absl::UnixEpoch() + absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
}

// A sticky wake-up: Notify() makes the current or the next Wait*() return at once.
class WakeupSignal {
 public:
  void Notify() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_ = true;
    }
    cv_.notify_all();
  }

  // Returns when notified (consuming the notification) or once `timeout` has passed on the
  // steady clock (InfiniteDuration: only when notified).
  void WaitFor(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (timeout == absl::InfiniteDuration()) {
      cv_.wait(lock, [this] { return pending_; });
    } else if (timeout > absl::ZeroDuration()) {
      cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [this] { return pending_; });
    }
    pending_ = false;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;  // guarded by mu_
};

}  // namespace registry

#endif  // BASE_MONOTONIC_H_
