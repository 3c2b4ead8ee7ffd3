// SPDX-License-Identifier: Apache-2.0
// repository/session_lifecycle.h
//
// The life cycle of the instance session as a pure state machine: which session is live, when
// it is renewed, when it counts as lost, when a new one is created, and what the connection
// listeners hear of it. No clock, no I/O, no lock: the owner (SessionKeeper) passes the times
// and the answers, makes the calls the machine asks for and carries out the effects it returns.
// The rule of when a session counts as lost is written here once, beside its invariant.
//
//   kNone --Created--> kLive <--Renewed-- kSuspended
//                        |  --RenewFailed / Unreachable-->  |
//                        +------> kLost <-------------------+   (404, or the loss deadline)
//                                   |  --Created-->  kRestoring --RestoreDone--> kLive
//
// SAFETY (lock/README.md, "Safety"; hold_deadline.h). Let S be the send time of the last create
// or renewal of the live session that succeeded. Invariant: asked at any moment at or after
// S + loss_after, Next() says kDeclareLost (and never before); every wait it asks for (the next
// renewal, a retry) and every renewal's budget ends by that moment. So the renewal thread, which
// does what Next() says, ends the session at the deadline, late only by how late it wakes (the
// margin of hold_deadline.h covers that). No answer but a successful renewal moves S: a server
// cut off from the leader says "no leader" for as long as the cut lasts, while the majority
// expires the session. A slow election may thus cost a session the servers kept: a false loss,
// never an overlap. tests/repository/session_lifecycle_test.cc tries to break it.
//
// Thread safety: none; the owner guards it (SessionKeeper::mu_).
#ifndef REPOSITORY_SESSION_LIFECYCLE_H_
#define REPOSITORY_SESSION_LIFECYCLE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "registry/repository.h"
#include "repository/hold_deadline.h"

namespace registry {

enum class SessionPhase {
  kNone,       // no session yet
  kLive,       // session renewed in time
  kSuspended,  // renewals failing, session maybe alive
  kLost,       // no session; creating one
  kRestoring,  // new session; ephemeral keys being bound to it again
};

// What the owner must do after a transition, in this order: queue `created` / `lost` for the
// session observers (locks learn of a loss before any listener), publish each of `publish` to
// the connection listeners, then act on the rest.
struct SessionEffects {
  std::optional<std::string> created;  // this session became the live one
  // The live session counted lost, and whether the server may still have it (the loss was
  // decided by the clock, not by a server calling it unknown): then it must be destroyed.
  struct Loss {
    std::string session;
    bool maybe_alive = false;
  };
  std::optional<Loss> lost;
  std::vector<ConnectionState> publish;
  bool suspended = false;           // a live session became suspended (log why)
  bool restore = false;             // bind every remembered ephemeral key to the new session
  bool start_renewer = false;       // the first session: start the renewal thread
  bool check_now = false;           // wake the renewal thread: a renewal is due now
  bool log_create_failure = false;  // the first create failure in a row
};

// What the renewal thread does next (Next()).
struct SessionStep {
  enum class Kind {
    kWait,         // nothing is due before `until`
    kRenew,        // renew `session` in a call cut after `budget`
    kDeclareLost,  // the loss deadline has come: call Expired()
    kCreate,       // create a session (then Created or CreateFailed)
  };
  Kind kind = Kind::kWait;
  absl::Time until = absl::InfiniteFuture();
  std::string session;
  absl::Duration budget = absl::ZeroDuration();
};

class SessionLifecycle {
 public:
  SessionLifecycle(absl::Duration ttl, HoldDeadline hold_deadline)
      : ttl_(ttl), hold_deadline_(hold_deadline) {}

  SessionPhase phase() const { return phase_; }
  // The live session; "" in kNone and kLost.
  const std::string& session() const { return session_; }
  // When the live session counts as lost unless a renewal succeeds first: S + loss_after.
  absl::Time loss_deadline() const { return last_renewed_ + hold_deadline_.loss_after; }

  // What is due at `now` (all times on one monotonic clock).
  SessionStep Next(absl::Time now) const;

  // A create sent at `sent` made session `id`. `published`: what the listeners heard last (a
  // call may have reported Consul unreachable before the first session existed).
  SessionEffects Created(std::string id, absl::Time sent, std::optional<ConnectionState> published);
  // A create failed at `now`; the next is due after `backoff(failures in a row)`.
  SessionEffects CreateFailed(absl::Time now, absl::FunctionRef<absl::Duration(int)> backoff);
  // A renewal of `id` sent at `sent` succeeded. Ignored unless `id` is the live session.
  SessionEffects Renewed(const std::string& id, absl::Time sent);
  // The server answered that it does not know `id` (404): lost, not maybe alive.
  SessionEffects RenewRefused(const std::string& id);
  // A renewal of `id` failed at `now` without an answer about the session (no leader, a
  // transport error, cut by its budget); the next attempt is due after `retry`, but never after
  // the loss deadline.
  SessionEffects RenewFailed(const std::string& id, absl::Time now, absl::Duration retry);
  // Next() said kDeclareLost at `now`: the session counts as lost.
  SessionEffects Expired(absl::Time now);
  // A call or a watch found Consul unreachable at `now`: a live session is suspended and
  // checked at once (the check decides between RECONNECTED and LOST).
  SessionEffects Unreachable(absl::Time now);
  // A lock heard that `id` is invalid at `now`: if it is the live session, it is checked at once.
  SessionEffects CheckNow(const std::string& id, absl::Time now);
  // Every remembered ephemeral key is bound to the live session.
  SessionEffects RestoreDone();
  // The owner stops: returns the live session ("" if none), which the machine forgets; nothing
  // is due any more.
  std::string Abandon();

  const HoldDeadline& hold_deadline() const { return hold_deadline_; }

 private:
  SessionEffects Lose(absl::Time now, bool maybe_alive);

  const absl::Duration ttl_;
  const HoldDeadline hold_deadline_;
  SessionPhase phase_ = SessionPhase::kNone;
  std::string session_;
  absl::Time last_renewed_ = absl::InfinitePast();  // S: the basis of the loss deadline
  absl::Time next_renew_ = absl::InfiniteFuture();  // never after the loss deadline
  absl::Time next_create_ = absl::InfiniteFuture();
  int create_failures_ = 0;
};

}  // namespace registry

#endif  // REPOSITORY_SESSION_LIFECYCLE_H_
