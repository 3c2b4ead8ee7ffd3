// lock/key_monitor.h
//
// KeyMonitor watches the keys of held locks on one background thread: one blocking GET per
// watched key, all multiplexed on one curl multi handle, and reports a key that was deleted or
// is held by any session other than the expected one. The same thread runs posted tasks (lost
// listeners), so a manager has exactly one background thread, started on first use.
//
// Requests go to the client's preferred server with the client's options (token, datacenter,
// TLS, timeouts); a server that fails is reported to the client, and the query is retried with
// back-off. A failing query never counts as a loss: losing the instance session is the session
// keeper's verdict, reported separately. Cancelling `canceller` aborts every query (none is
// started afterwards) but tasks still run.
//
// Thread safety: all methods may be called concurrently from any thread; callbacks and tasks run
// on the monitor thread, one at a time, with no lock of the monitor held.
#ifndef LOCK_KEY_MONITOR_H_
#define LOCK_KEY_MONITOR_H_

#include <curl/curl.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "consul/canceller.h"
#include "consul/client.h"

namespace registry::lock {

class KeyMonitor {
 public:
  using LostCallback = std::function<void(const absl::Status& reason)>;

  // `client` and `canceller` must outlive the monitor. `block_wait` is the server-side wait of
  // each blocking query.
  KeyMonitor(consul::Client& client, consul::Canceller* canceller, absl::Duration block_wait);
  // Stop().
  ~KeyMonitor();
  KeyMonitor(const KeyMonitor&) = delete;
  KeyMonitor& operator=(const KeyMonitor&) = delete;

  // From `start_at` (on MonotonicNow()'s clock, base/monotonic.h) on, watches `consul_key`,
  // expected to be held by `session`. Calls `on_lost` at most once, with Aborted saying what
  // happened, when the key is absent or held otherwise; the watch then ends. `id` must be unique
  // among the watches of this monitor.
  void Watch(uint64_t id, std::string consul_key, std::string session, absl::Time start_at,
             LostCallback on_lost);

  // Ends watch `id` (its query is aborted). A callback already running may still complete.
  void Unwatch(uint64_t id);

  // Runs `task` on the monitor thread (in order with other tasks). Dropped after Stop().
  void Post(std::function<void()> task);

  // Runs the tasks already posted, aborts every query and joins the thread. Idempotent; must not
  // be called from the monitor thread.
  void Stop();

  // Number of blocking queries in flight (for tests).
  int queries_in_flight() const;

 private:
  struct Target {
    std::string key;
    std::string session;
    absl::Time start_at;
    LostCallback on_lost;
  };
  struct Query;

  // Starts the thread if needed.
  void EnsureStartedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Wake();
  void Run();

  consul::Client& client_;
  consul::Canceller* const canceller_;
  const absl::Duration block_wait_;
  CURLM* const multi_;  // created by the constructor; curl_multi_wakeup is thread-safe

  mutable absl::Mutex mu_;
  std::map<uint64_t, Target> targets_ ABSL_GUARDED_BY(mu_);
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // When the thread will next look at its targets without being woken.
  absl::Time planned_wake_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;  // bumped by every Watch()
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_ ABSL_GUARDED_BY(mu_);  // joined by Stop(); never detached
  // Wakes the thread when `canceller_` is cancelled; destroyed by Stop().
  std::unique_ptr<consul::Canceller::Waker> waker_;
};

}  // namespace registry::lock

#endif  // LOCK_KEY_MONITOR_H_
