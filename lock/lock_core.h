// SPDX-License-Identifier: Apache-2.0
// lock/lock_core.h
//
// LockCore is the state a LockManager shares with its locks (internal to lock/): the instance
// session and its observer, the manager's own canceller (cancelled when the repository closes or
// the manager is destroyed), the table of locks, and the bookkeeping that lets the manager's
// destructor wait for calls in progress. The manager has no thread of its own: held lock keys
// are followed by key watches on the repository's watch engine, and lost listeners run as tasks
// on the repository's serial executor, so they never run on a thread that does network I/O for
// watches or renews the session.
//
// Lock order: a lock's mutex and the core's mutex are never held together; the core calls into
// locks only after releasing its own mutex, and locks call the core without holding theirs.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef LOCK_LOCK_CORE_H_
#define LOCK_LOCK_CORE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/serial_executor.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "lock/distributed_lock.h"
#include "lock/lock_kind.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"
#include "repository/instance_session.h"
#include "repository/key_space.h"
#include "watch/key_watcher.h"

namespace registry::lock {

class LockCore : public std::enable_shared_from_this<LockCore> {
 public:
  // Use Create(): the core registers callbacks that refer to itself.
  LockCore(const LockManagerParts& parts, LockManagerOptions options);
  ~LockCore();
  LockCore(const LockCore&) = delete;
  LockCore& operator=(const LockCore&) = delete;

  // A started core: observing the instance session and linked to the repository's canceller.
  // Errors: FailedPrecondition if another core of the session exists (see LockManager::Create).
  static absl::StatusOr<std::shared_ptr<LockCore>> Create(const LockManagerParts& parts,
                                                          LockManagerOptions options);

  // Closes every lock ("the lock manager was destroyed"), cancels requests, waits for the calls
  // in progress to leave, detaches from the session, and waits for the tasks it handed over
  // (unless it runs in one). Idempotent.
  void Shutdown();

  // The lock of `kind` named `name`: one object per kind and canonical name. A semaphore's
  // `limit` must be the same on every call for a name (else FailedPrecondition naming both).
  absl::StatusOr<std::shared_ptr<DistributedLock>> GetLock(absl::string_view name, LockKind kind,
                                                           int limit = 1);

  // --- For TwoTierLock --------------------------------------------------------------------

  // Registers a call that may use the session or the client; false (and nothing registered) once
  // closed. Every true must be matched by EndCall().
  bool BeginCall();
  void EndCall();
  // Why calls fail: OK while open.
  absl::Status closed_status();

  InstanceSession& session() { return session_; }
  consul::Client& client() { return client_; }
  // The manager's canceller: pass it to every request.
  consul::Canceller* canceller() { return &canceller_; }
  const LockManagerOptions& options() const { return options_; }
  const KeySpace& key_space() const { return key_space_; }
  absl::Duration max_unreachable() const { return max_unreachable_; }
  absl::Duration block_query_wait() const { return block_query_wait_; }
  absl::Duration lock_retry() const { return lock_retry_; }

  // The instance session for the next acquire attempt: the live one; the first one, created
  // now, if the instance never had one; else (a lost or refused session being replaced) waits
  // for its successor, at most one lock_retry and never past `deadline`, returning "" if none
  // came. Creating never outlasts `request_deadline`. Errors: the closed status; what
  // AcquireSessionId() reports when creating.
  absl::StatusOr<std::string> SessionForAttempt(absl::Time deadline, absl::Time request_deadline);
  // Records that the server called `session_id` invalid; the next SessionForAttempt() waits
  // (at most one lock_retry, and never past its deadline) for the session to change.
  void ReportSessionInvalid(const std::string& session_id);
  // True if `session_id` was reported lost by the session observer.
  bool IsSessionLost(const std::string& session_id);

  // Sleeps until `until`; returns false early when the core closes.
  bool SleepUntil(absl::Time until);

  // A new hold id, unique within this core.
  uint64_t NextHoldId();

  // Follows the lock key `consul_key`, held by `session`, from options().monitor_delay on:
  // `on_lost` runs once, on a listener worker, with Aborted saying what
  // happened when the key is deleted, released or held by another session. A failing read is
  // never a loss (losing the session is the session observer's verdict). Returns the key watch,
  // or 0 when the key is not followed (monitor_delay is infinite, or the engine is closed:
  // logged).
  watch::WatchId WatchHeldKey(const std::string& consul_key, const std::string& session,
                              std::function<void(const absl::Status&)> on_lost);
  // Ends a key watch of WatchHeldKey (0 is ignored). When it returns, its `on_lost` is not
  // running (unless called from inside it) and will not be called.
  void StopWatching(watch::WatchId id);

  // Runs `task` off the caller's thread, in order with the other tasks (lost listeners, releases
  // of unknown acquires); Shutdown() waits for the tasks already handed over (unless it runs in
  // one). Dropped only once the repository's executor has stopped (then logged).
  void Deliver(std::function<void()> task);

 private:
  void OnSessionEvent(const InstanceSession::Event& event);
  // A new lock of `kind`, with its tier 2.
  std::shared_ptr<TwoTierLock> NewLock(LockKind kind, const std::string& canonical, int limit);
  // Closes the core and every lock with `reason`; false if it was already closed.
  bool CloseAll(const absl::Status& reason);

  InstanceSession& session_;
  consul::Client& client_;
  watch::KeyWatcher& watches_;  // follows held lock keys
  SerialExecutor& tasks_;       // runs Deliver()'s tasks
  const LockManagerOptions options_;
  // Copies of what the locks need of the instance's settings, valid after Shutdown() too.
  const KeySpace key_space_;
  const absl::Duration max_unreachable_;
  const absl::Duration block_query_wait_;
  const absl::Duration lock_retry_;
  consul::Canceller canceller_;
  // Cancels canceller_ and closes every lock when the repository's canceller is cancelled.
  std::unique_ptr<consul::Canceller::Waker> repository_link_;
  int observer_id_ = 0;      // set by Create(), removed by Shutdown()
  bool registered_ = false;  // counted in the one-core-per-session registry by Create()

  absl::Mutex mu_;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  bool had_session_ ABSL_GUARDED_BY(mu_) = false;  // a session was seen or created
  uint64_t session_events_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::string> lost_sessions_ ABSL_GUARDED_BY(mu_);  // newest last, a few
  std::string invalid_session_ ABSL_GUARDED_BY(mu_);            // last session the server refused
  absl::Time invalid_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t next_hold_id_ ABSL_GUARDED_BY(mu_) = 1;
  int deliveries_ ABSL_GUARDED_BY(mu_) = 0;  // tasks handed to tasks_ and not yet run
  std::map<std::pair<LockKind, std::string>, std::shared_ptr<TwoTierLock>> locks_
      ABSL_GUARDED_BY(mu_);
};

// One try at deleting `entry`, a key only one hold ever writes (an entry of a fair lock's queue or
// of a holders record): its delete needs no fence, and a resent one is harmless, since no one
// writes that key again once it is gone. Errors are the caller's to handle.
absl::Status DeleteOwnEntry(LockCore& core, const std::string& entry);

}  // namespace registry::lock

#endif  // LOCK_LOCK_CORE_H_
