// SPDX-License-Identifier: Apache-2.0
// repository/session_lifecycle.h
//
// The life cycle of the instance session as a pure state machine, in the watch's shape
// (watch/query_machine.h): Transition(input) -> actions, and Next(now) for what is due. It says
// which session is live, when it is renewed, when it counts as lost, when a new one is created,
// and what the connection listeners hear of it. No clock, no I/O, no lock: the owner
// (SessionKeeper) passes the times and the answers as inputs, makes the calls Next() asks for and
// carries out the actions in order. The rule of when a session counts as lost is written here
// once, beside its invariant.
//
//   kNone --SessionCreated--> kLive <--SessionRenewed-- kSuspended
//                               |  --SessionRenewFailed, StoreReachability-->  |
//                               +------> kLost <-------------------------------+
//                                          |  (SessionUnknownToServer, or the loss deadline)
//                                          |  --SessionCreated--> kRestoring --KeysRestored-->
//                                          kLive
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

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "base/log.h"
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

// The inputs: what happened to the session, with the times it happened at (one monotonic clock).
struct SessionCreated {  // a create sent at `sent` made session `id`
  std::string id;
  absl::Time sent;
  // What the listeners heard last: a call may have reported Consul unreachable before the first
  // session existed.
  std::optional<ConnectionState> published;
};
struct SessionCreateFailed {  // a create failed at `now`, saying `error`
  absl::Time now;
  std::string error;
};
struct SessionRenewed {  // a renewal of `id` sent at `sent` succeeded
  std::string id;
  absl::Time sent;
};
struct SessionUnknownToServer {  // a renewal of `id` was answered 404
  std::string id;
};
// A renewal of `id` failed at `now` without an answer about the session (no leader, a transport
// error, cut by its budget), saying `error`.
struct SessionRenewFailed {
  std::string id;
  absl::Time now;
  std::string error;
};
struct LossDeadlinePassed {  // Next() said kDeclareLost at `now`
  absl::Time now;
};
// A call or a watch found Consul reachable, or not, at `now`; `published` is what the listeners
// heard last (before the first session the reports alone make the connection state).
struct StoreReachability {
  bool reachable = false;
  absl::Time now;
  std::optional<ConnectionState> published;
};
struct SessionReportedInvalid {  // a lock heard at `now` that `id` is invalid
  std::string id;
  absl::Time now;
};
struct KeysRestored {};  // every remembered ephemeral key is bound to the live session
using SessionInput = std::variant<SessionCreated, SessionCreateFailed, SessionRenewed,
                                  SessionUnknownToServer, SessionRenewFailed, LossDeadlinePassed,
                                  StoreReachability, SessionReportedInvalid, KeysRestored>;

// The actions: what the owner must do after a transition, in the order given. The session
// observers' news comes before what the connection listeners hear: locks learn of a loss before
// any listener hears LOST.
struct AnnounceCreated {  // `session` is the live one now
  std::string session;
  bool first = false;  // the first session, not a replacement
  friend bool operator==(const AnnounceCreated&, const AnnounceCreated&) = default;
};
struct AnnounceLost {  // `session` counts as lost
  std::string session;
  // The clock decided, not a server calling it unknown: the server may still have it, and it
  // must be destroyed.
  bool maybe_alive = false;
  friend bool operator==(const AnnounceLost&, const AnnounceLost&) = default;
};
struct PublishState {  // tell the connection listeners
  ConnectionState state;
  friend bool operator==(const PublishState&, const PublishState&) = default;
};
struct RestoreKeys {  // bind every remembered ephemeral key to the new session
  friend bool operator==(const RestoreKeys&, const RestoreKeys&) = default;
};
struct StartRenewer {  // the first session: start the renewal thread
  friend bool operator==(const StartRenewer&, const StartRenewer&) = default;
};
struct WakeRenewer {  // a renewal is due now
  friend bool operator==(const WakeRenewer&, const WakeRenewer&) = default;
};
struct Note {  // log `text` (component "session")
  LogLevel level = LogLevel::kInfo;
  std::string text;
  friend bool operator==(const Note&, const Note&) = default;
};
using SessionAction = std::variant<AnnounceCreated, AnnounceLost, PublishState, RestoreKeys,
                                   StartRenewer, WakeRenewer, Note>;

// What the machine needs besides its inputs: the session's timings and its delays (each may draw
// a random jitter, as the watch's back-off does).
struct SessionRules {
  absl::Duration ttl;
  HoldDeadline hold_deadline;
  std::function<absl::Duration()> renew_retry;                 // before a renewal is retried
  std::function<absl::Duration(int failures)> create_backoff;  // after creates failed in a row
};

// What the renewal thread does next (Next()).
struct SessionStep {
  enum class Kind {
    kWait,         // nothing is due before `until`
    kRenew,        // renew `session` in a call cut after `budget`
    kDeclareLost,  // the loss deadline has come: input LossDeadlinePassed
    kCreate,       // create a session (then input SessionCreated or SessionCreateFailed)
  };
  Kind kind = Kind::kWait;
  absl::Time until = absl::InfiniteFuture();
  std::string session;
  absl::Duration budget = absl::ZeroDuration();
};

class SessionLifecycle {
 public:
  explicit SessionLifecycle(SessionRules rules) : rules_(std::move(rules)) {}

  SessionPhase phase() const { return phase_; }
  // The live session; "" in kNone and kLost.
  const std::string& session() const { return session_; }
  // When the live session counts as lost unless a renewal succeeds first: S + loss_after.
  absl::Time loss_deadline() const { return last_renewed_ + rules_.hold_deadline.loss_after; }
  const HoldDeadline& hold_deadline() const { return rules_.hold_deadline; }

  // What is due at `now` (all times on one monotonic clock).
  SessionStep Next(absl::Time now) const;

  // Takes in what happened; returns what to do, in order. An input about a session other than
  // the live one (an answer about a session given up) changes nothing and asks for nothing.
  std::vector<SessionAction> Transition(const SessionInput& input);

  // The owner stops: returns the live session ("" if none), which the machine forgets; nothing
  // is due any more.
  std::string Abandon();

 private:
  // What one transition decided, before ToActions puts it in order.
  struct Effects {
    std::optional<AnnounceCreated> created;
    std::optional<AnnounceLost> lost;
    std::vector<ConnectionState> publish;
    std::vector<Note> log;
    bool restore = false;
    bool start_renewer = false;
    bool wake_renewer = false;
  };
  static std::vector<SessionAction> ToActions(Effects effects);

  Effects On(const SessionCreated& input);
  Effects On(const SessionCreateFailed& input);
  Effects On(const SessionRenewed& input);
  Effects On(const SessionUnknownToServer& input);
  Effects On(const SessionRenewFailed& input);
  Effects On(const LossDeadlinePassed& input);
  Effects On(const StoreReachability& input);
  Effects On(const SessionReportedInvalid& input);
  Effects On(const KeysRestored& input);
  Effects Lose(absl::Time now, bool maybe_alive);

  const SessionRules rules_;
  SessionPhase phase_ = SessionPhase::kNone;
  std::string session_;
  absl::Time last_renewed_ = absl::InfinitePast();  // S: the basis of the loss deadline
  absl::Time next_renew_ = absl::InfiniteFuture();  // never after the loss deadline
  absl::Time next_create_ = absl::InfiniteFuture();
  int create_failures_ = 0;
};

}  // namespace registry

#endif  // REPOSITORY_SESSION_LIFECYCLE_H_
