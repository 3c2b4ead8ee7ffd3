// SPDX-License-Identifier: Apache-2.0
// consul/canceller.h
//
// Canceller lets one thread abort requests that other threads are blocked in. The caller creates
// one, passes it to any number of requests, and calls Cancel() (for example on shutdown): every
// request using it that is in flight returns absl::CancelledError promptly (the curl transport
// wakes its poll loop; no waiting for a 60 s blocking query), and every request started with it
// afterwards fails at once without touching the network. Cancellation is permanent: a cancelled
// Canceller stays cancelled.
//
// A Canceller may also carry a deadline and a parent: Canceller call(parent, deadline) is cancelled
// whenever `parent` is, and every request made with it ends by `deadline` (Client cuts the
// request's timeout to the time left and reports DeadlineExceeded once it has passed). This is
// how a call with a deadline (TryLock) keeps every request inside it from outliving it.
//
// Transports hook in with Canceller::Waker, a scoped registration of a wake-up callback.
//
// Thread safety: all methods may be called concurrently from any thread. The Canceller must
// outlive every request (and every Waker) that uses it.
#ifndef CONSUL_CANCELLER_H_
#define CONSUL_CANCELLER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace registry::consul {

class Canceller {
 public:
  Canceller() = default;
  // A canceller that is cancelled when `parent` (may be null) is, and whose requests end by
  // `deadline`. Must not outlive `parent`.
  Canceller(Canceller* parent, absl::Time deadline);
  ~Canceller();
  Canceller(const Canceller&) = delete;
  Canceller& operator=(const Canceller&) = delete;

  // Marks this canceller cancelled and runs every registered wake-up callback once. Idempotent;
  // returns without waiting for the cancelled requests to finish.
  void Cancel();

  // True once Cancel() has been called (here or on the parent).
  bool IsCancelled() const;

  // The time by which every request made with this canceller must end; InfiniteFuture when none.
  absl::Time deadline() const { return deadline_; }

  // Scoped registration of a wake-up callback, for transports. While a Waker is alive its
  // callback runs (at most once, on the thread calling Cancel()) when the canceller is
  // cancelled. The destructor guarantees the callback is neither running nor will run.
  // The callback must be quick and must not call back into the Canceller.
  class Waker {
   public:
    // Registers `wake` on `canceller` (which may be null: then nothing is registered).
    // If `canceller` is already cancelled, nothing is registered and cancelled() is true.
    Waker(Canceller* canceller, std::function<void()> wake);
    ~Waker();
    Waker(const Waker&) = delete;
    Waker& operator=(const Waker&) = delete;

    // True if the canceller was already cancelled when this Waker was created.
    bool cancelled() const { return cancelled_; }

   private:
    Canceller* canceller_;
    uint64_t id_ = 0;
    bool cancelled_ = false;
  };

 private:
  // Returns 0 (and does not register) if already cancelled.
  uint64_t Register(std::function<void()> wake);
  void Unregister(uint64_t id);

  const absl::Time deadline_ = absl::InfiniteFuture();
  std::unique_ptr<Waker> parent_link_;  // cancels this one when the parent is cancelled

  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<std::pair<uint64_t, std::function<void()>>> wakers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::consul

#endif  // CONSUL_CANCELLER_H_
