// SPDX-License-Identifier: Apache-2.0
// repository/key_restorer.h
//
// KeyRestorer brings an instance's ephemeral keys back after its session was lost: it binds every
// remembered key (remembered_keys.h) to the new session, up to kMaxKeysPerBatch keys per
// transaction, and destroys the lost sessions the server may still have, so that their keys and
// locks are free after the lock-delay rather than after their expiry. A key made by an exclusive
// write is taken back only if it is absent or still held by an earlier session of this instance;
// otherwise it is forgotten.
//
// The session keeper (session_keeper.h) tells it which session is live and when keys need
// binding; it works on a thread of its own, started when there is work and ended once every key
// is back and no lost session is left, so that renewal never waits behind it. It tells the keeper
// what it learns through Callbacks, on its thread, with none of its locks held.
//
// Lock order: write order (RememberedKeys) -> the keeper's mutex -> this class's mutex -> the
// RememberedKeys mutex. The restorer takes the write order for one batch at a time, never
// while holding its own mutex.
//
// Thread safety: all public methods may be called concurrently from any thread; Stop() not from a
// callback.
#ifndef REPOSITORY_KEY_RESTORER_H_
#define REPOSITORY_KEY_RESTORER_H_

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/monotonic.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "repository/doomed_sessions.h"
#include "repository/ephemeral_writer.h"
#include "repository/remembered_keys.h"
#include "repository/session_calls.h"

namespace registry {

class KeyRestorer {
 public:
  struct Callbacks {
    // A pass found no remembered key bound to anything but `session`. The keeper checks that
    // again under its own lock (a write may have remembered one since) before it says so.
    std::function<void(const std::string& session)> restored;
    // The server refused `session` while a key was bound to it: the keeper checks it at once.
    std::function<void(const std::string& session)> session_invalid;
  };

  // Every reference must outlive the restorer.
  KeyRestorer(consul::Client& client, consul::Canceller& canceller,
              const SessionKeeperOptions& options, RememberedKeys& keys, SessionCalls& calls,
              Callbacks callbacks);
  ~KeyRestorer();  // Stop()
  KeyRestorer(const KeyRestorer&) = delete;
  KeyRestorer& operator=(const KeyRestorer&) = delete;

  // `session` is the live session now: binding and destroying wait for one.
  void SessionCreated(const std::string& session) ABSL_LOCKS_EXCLUDED(mu_);
  // The live `session` was lost; `maybe_alive`: the server may still have it (destroy it).
  void SessionLost(const std::string& session, bool maybe_alive) ABSL_LOCKS_EXCLUDED(mu_);
  // Some remembered key is bound to an earlier session: a pass is due now (with a live session).
  void NeedRestore() ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the thread (the caller cancels in-flight requests through the canceller first) and
  // returns the lost sessions not yet destroyed. Later calls do nothing. Idempotent.
  std::vector<std::string> Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The thread's loop: destroys due lost sessions and runs due passes until no work is left.
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  bool PassDueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One attempt to destroy a lost session that is due (mu_ released during the call); false if
  // none is due.
  bool DestroyDueSessionLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Binds every remembered key not bound to the live session to it, in batches (mu_ released
  // for each batch).
  void PassLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One batch of a pass (the write order held exclusively, mu_ not held).
  void Batch(std::vector<BindRequest> batch, const std::string& session, bool* retry_later,
             bool* stop) ABSL_LOCKS_EXCLUDED(mu_);
  // Records what became of one key of a batch; sets `*retry_later` and `*stop` as needed.
  void Record(const std::string& key, const std::string& session, BindOutcome outcome,
              bool* retry_later, bool* stop) ABSL_LOCKS_EXCLUDED(mu_);

  consul::Client& client_;
  consul::Canceller& canceller_;
  const SessionKeeperOptions& options_;
  RememberedKeys& keys_;
  SessionCalls& calls_;
  const Callbacks callbacks_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::string session_ ABSL_GUARDED_BY(mu_);                    // the live session; "" if none
  std::deque<std::string> lost_sessions_ ABSL_GUARDED_BY(mu_);  // earlier ones, newest last
  bool pass_needed_ ABSL_GUARDED_BY(mu_) = false;  // some key is bound to an old session
  absl::Time next_pass_ ABSL_GUARDED_BY(mu_);      // on MonotonicNow()'s clock
  // Attempts stop 2 x TTL after the loss: the server has expired the session on its own by
  // then, unless a leader was elected later still (a new leader restarts every timer).
  DoomedSessions doomed_ ABSL_GUARDED_BY(mu_){2 * options_.ttl};
  absl::BitGen bitgen_ ABSL_GUARDED_BY(mu_);
  WakeupSignal signal_;  // the thread sleeps on it (steady clock), not on mu_
  // Started when work arrives and none is running; it ends when no work is left (joined by the
  // next start, immediately: it has left its loop) or at Stop().
  std::thread thread_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // thread_ is in its loop
};

}  // namespace registry

#endif  // REPOSITORY_KEY_RESTORER_H_
