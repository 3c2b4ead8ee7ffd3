// SPDX-License-Identifier: Apache-2.0
// repository/session_keeper.h
//
// SessionKeeper owns the instance session of one repository and the ephemeral keys bound to it.
// When the session is renewed, lost and replaced, and what the listeners hear of it, is decided
// by its life cycle (session_lifecycle.h, a pure state machine); the keeper makes the calls, runs
// the threads and delivers the events.
//
//  - The session (Behavior=delete, TTL-only) is created by the first ephemeral write, in the
//    caller's thread; from then on a background thread renews it every TTL/2.
//  - A failing renewal makes the state SUSPENDED and is retried about once a second; the
//    session counts as lost when the server answers 404 or at the loss deadline: the send time
//    of the last renewal (or create) that succeeded plus HoldDeadline::loss_after (one TTL, less
//    when the lock-delay is under min(TTL / 4, 1 s); hold_deadline.h), whatever any server
//    answered in between (the server may have expired it; it is then destroyed on a best-effort
//    basis so that the server agrees). No renewal call runs past that deadline. After a loss the
//    thread creates a new session, and the key restorer (key_restorer.h, a thread of its own,
//    started for that and ended once every key is back) binds every remembered ephemeral key to
//    it again and destroys the lost session (LOST, then RECONNECTED once all are back); renewal,
//    on its own thread, never waits for that work or for user writes.
//  - What connection listeners and session observers hear is published through the instance's
//    ConnectionPublisher (connection_publisher.h), which delivers it by ordered tasks on the
//    serial executor with no lock held, never on the thread that renews. On a loss, the
//    observers (held locks) learn of it before the listeners hear LOST.
//
// The keys it binds are remembered in the instance's RememberedKeys (remembered_keys.h), which
// also orders writes: ephemeral writes and re-persisting hold its write order exclusively for
// one attempt (or one restore batch) at a time; persistent writes go there directly, not through
// the keeper.
//
// Thread safety: all public methods may be called concurrently from any thread. Stop() may be
// called from a listener.
#ifndef REPOSITORY_SESSION_KEEPER_H_
#define REPOSITORY_SESSION_KEEPER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/limits.h"
#include "base/monotonic.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "registry/repository.h"
#include "repository/connection_publisher.h"
#include "repository/ephemeral_writer.h"
#include "repository/hold_deadline.h"
#include "repository/instance_session.h"
#include "repository/key_restorer.h"
#include "repository/remembered_keys.h"
#include "repository/session_calls.h"
#include "repository/session_lifecycle.h"

namespace registry {

class SessionKeeper {
 public:
  // `client`, `canceller`, `keys` and `publisher` must outlive the keeper; Stop() cancels
  // `canceller` and closes `publisher`, which tells listeners and observers what the keeper
  // publishes. `keys` holds what the ephemeral writes bound, and orders writes.
  SessionKeeper(consul::Client& client, consul::Canceller& canceller, SessionKeeperOptions options,
                RememberedKeys& keys, ConnectionPublisher& publisher);
  ~SessionKeeper();  // Stop(), then joins the thread
  SessionKeeper(const SessionKeeper&) = delete;
  SessionKeeper& operator=(const SessionKeeper&) = delete;

  // Binds `consul_key` = `value` to the instance session whoever held it, and remembers it.
  // Lock-delay refusals are retried every lock_retry for at most lock_delay + 2 * lock_retry,
  // then Unavailable. FailedPrecondition once stopped.
  absl::Status PersistEphemeral(absl::string_view consul_key, absl::string_view value);

  // Creates `consul_key` = `value` bound to the instance session unless it exists; true iff
  // this call created it (then it is remembered). Lock-delay handling as above.
  absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view consul_key,
                                                 absl::string_view value);

  // What a call or a watch exchange said of the store: the keeper listens to its client's
  // reachability reports from its construction to its destruction, so that an instance without
  // a session hears of outages too. Without a session the
  // connection state follows the reports: CONNECTED at the first answer, SUSPENDED when Consul
  // cannot be reached, RECONNECTED when it answers again. With one, an unreachable store makes a
  // live session SUSPENDED at once and has it checked now; the check decides what follows
  // (RECONNECTED, or LOST), since ephemeral keys and locks live and die with the session. Cheap
  // when the report repeats the last one.
  void ReportReachable(bool reachable);

  // Stops the thread (cancelling in-flight requests), deletes the ephemeral keys the live
  // session still holds, then destroys the session, so that its keys vanish at once and, having
  // been deleted rather than dropped by the session's end, carry no lock-delay: another instance
  // can claim them right away. (Lock keys are not the keeper's: a session's end still puts its
  // lock-delay on them.) All within one request timeout. Later calls fail with
  // FailedPrecondition. Idempotent.
  absl::Status Stop();
  bool stopped();

  // As InstanceSession (instance_session.h) describes them (its observers subscribe to the
  // publisher).
  absl::StatusOr<std::string> AcquireSessionId(absl::Time deadline);
  std::string CurrentSessionId();
  void ReportSessionInvalid(absl::string_view session_id);

 private:
  absl::StatusOr<bool> Bind(absl::string_view consul_key, absl::string_view value, bool exclusive);

  // The renewal thread: does what the life cycle says is due, and sleeps until the next of it.
  void Run();
  // Feeds `input` to the life cycle (session_lifecycle.h) and carries out its actions in order.
  void ApplyLocked(const SessionInput& input) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The observers, then the restorer, hear of the new (or lost) session; counted and logged.
  void AnnounceCreatedLocked(AnnounceCreated created) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AnnounceLostLocked(AnnounceLost lost) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes the renewal `step` asks for, sent at `sent` (mu_ released during the call).
  void RenewLocked(const SessionStep& step, absl::Time sent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecreateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The restorer found every remembered key bound to `session`: unless a write remembered one
  // bound elsewhere since, the life cycle hears KeysRestored.
  void RestorerDone(const std::string& session) ABSL_LOCKS_EXCLUDED(mu_);
  // Sleeps for `duration` unless stopped first; returns false if stopped.
  bool SleepUnlessStopped(absl::Duration duration);
  absl::Status ClosedError() const;

  consul::Client& client_;
  consul::Canceller& canceller_;
  const SessionKeeperOptions options_;
  SessionCalls calls_;  // every request about the session itself (made with no lock held)
  ConnectionPublisher& publisher_;  // published to under mu_ (its mutex is the innermost)

  // The remembered ephemeral keys; its write order is taken before mu_, its own mutex after.
  RememberedKeys& keys_;
  // Binds the keys to a new session after a loss, on a thread of its own; told of sessions and
  // of keys to bind under mu_ (its mutex comes after mu_).
  KeyRestorer restorer_;

  absl::Mutex mu_;
  // The live session, when it is renewed and when it counts as lost (session_lifecycle.h), on
  // MonotonicNow()'s clock (monotonic.h): a wall-clock step changes none of its schedules.
  SessionLifecycle lifecycle_ ABSL_GUARDED_BY(mu_);
  bool creating_ ABSL_GUARDED_BY(mu_) = false;  // a caller is creating the first session
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The renewal thread sleeps on it (steady clock), not on mu_.
  WakeupSignal renew_signal_;
  absl::BitGen bitgen_ ABSL_GUARDED_BY(mu_);

  int reachability_listener_ = 0;  // its id with the client; set by the constructor
  // The last ReportReachable(): -1 none yet, 0 unreachable, 1 reachable. Read and swapped
  // without mu_ so that a repeated report costs no lock.
  std::atomic<int> reachability_{-1};

  std::vector<std::string> orphans_ ABSL_GUARDED_BY(mu_);  // created while stopping
  bool swept_ ABSL_GUARDED_BY(mu_) = false;                // Stop() destroyed the sessions

  // thread_ renews and re-creates the session, and nothing else, so that renewal never waits
  // behind restore work or user writes; started with the first session, joined by Stop().
  std::thread thread_ ABSL_GUARDED_BY(mu_);
  std::thread::id thread_id_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry

#endif  // REPOSITORY_SESSION_KEEPER_H_
