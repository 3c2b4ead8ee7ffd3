// SPDX-License-Identifier: Apache-2.0
// repository/session_keeper.cc
//
// The session life cycle's inputs and actions, and the renewal thread. The ephemeral writes are in
// session_keeper_writes.cc; restoring keys after a loss in key_restorer.cc.
#include "repository/session_keeper.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "base/monotonic.h"
#include "base/status_macros.h"
#include "consul/session.h"
#include "repository/session_metrics.h"

namespace registry {

SessionKeeper::SessionKeeper(consul::Client& client, consul::Canceller& canceller,
                             SessionKeeperOptions options, RememberedKeys& keys,
                             ConnectionPublisher& publisher)
    : client_(client),
      canceller_(canceller),
      options_(std::move(options)),
      calls_(client, canceller, options_),
      publisher_(publisher),
      keys_(keys),
      restorer_(client, canceller, options_, keys, calls_,
                KeyRestorer::Callbacks{
                    .restored = [this](const std::string& session) { RestorerDone(session); },
                    .session_invalid =
                        [this](const std::string& session) { ReportSessionInvalid(session); },
                }),
      lifecycle_(SessionRules{.ttl = options_.ttl,
                              .hold_deadline = HoldDeadlineFor(options_.ttl, options_.lock_delay),
                              // Called by Transition, under mu_, which guards bitgen_.
                              .renew_retry =
                                  [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                    return SessionRetryDelay(options_, bitgen_);
                                  },
                              .create_backoff =
                                  [this](int failures) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                    return SessionCreateBackoff(options_, failures, bitgen_);
                                  }}) {
  // Every call and watch exchange of the client tells the connection state.
  reachability_listener_ =
      client_.AddReachabilityListener([this](bool reachable) { ReportReachable(reachable); });
}

SessionKeeper::~SessionKeeper() {
  client_.RemoveReachabilityListener(reachability_listener_);  // not running once it returns
  Stop().IgnoreError();
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    thread = std::move(thread_);
  }
  if (!thread.joinable()) return;
  if (thread.get_id() == std::this_thread::get_id()) {
    // The thread would return into a destroyed object: a programming error, not a race.
    Log(LogLevel::kError, "repository", "destroyed from its own listener; aborting");
    std::abort();
  }
  thread.join();
}

absl::Status SessionKeeper::ClosedError() const {
  return absl::FailedPreconditionError("the repository is closed");
}

bool SessionKeeper::stopped() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

absl::Status SessionKeeper::Stop() {
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::OkStatus();
    stopping_ = true;
    publisher_.Close();  // listeners and observers hear nothing more
    if (thread_id_ != std::this_thread::get_id()) thread = std::move(thread_);
  }
  renew_signal_.Notify();
  canceller_.Cancel();  // in-flight renewals, creations, restores and user requests return at once
  if (thread.joinable()) thread.join();
  std::vector<std::string> lost_not_destroyed = restorer_.Stop();  // its callbacks take mu_
  std::vector<std::string> doomed;
  std::string live;
  std::vector<std::string> live_keys;  // the ephemeral keys bound to `live`
  {
    absl::MutexLock lock(&mu_);
    swept_ = true;
    doomed = std::move(orphans_);
    live = lifecycle_.Abandon();
    if (!live.empty()) doomed.push_back(live);
    for (std::string& id : lost_not_destroyed) doomed.push_back(std::move(id));
    // Under mu_: a bind remembers its key under mu_ too, after checking stopping_.
    if (!live.empty()) live_keys = keys_.BoundTo(live);
    keys_.Clear();
  }
  // One request timeout for all of it: Close() must not block for longer. Deleting the keys
  // first (at most half of it) spares them the lock-delay that destroying the session would put
  // on them, so another instance can create them at once, as after ZooKeeper's close.
  const absl::Time deadline = absl::Now() + options_.request_timeout;
  calls_.DeleteKeysHeldBy(live, live_keys, absl::Now() + options_.request_timeout / 2);
  absl::Status status;
  for (const std::string& id : doomed) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      status.Update(absl::DeadlineExceededError(
          absl::StrCat("no time left to destroy session ", id, "; it expires by its TTL")));
      continue;
    }
    absl::Status destroyed = calls_.Destroy(id, nullptr, left);
    if (!destroyed.ok()) {
      status.Update(absl::Status(
          destroyed.code(),
          absl::StrCat("session ", id, " not destroyed (it expires by its TTL, ",
                       absl::FormatDuration(options_.ttl), "): ", destroyed.message())));
    }
  }
  return status;
}

absl::StatusOr<std::string> SessionKeeper::AcquireSessionId(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  const absl::Time wait_until =
      std::min(deadline, absl::Now() + std::max(options_.ttl, options_.request_timeout));
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !lifecycle_.session().empty() ||
           (lifecycle_.phase() == SessionPhase::kNone && !creating_);
  };
  for (;;) {
    if (stopping_) return ClosedError();
    if (!lifecycle_.session().empty()) return lifecycle_.session();
    if (lifecycle_.phase() == SessionPhase::kNone && !creating_) {
      creating_ = true;
      const absl::Time sent = MonotonicNow();
      mu_.Unlock();
      absl::StatusOr<std::string> id = calls_.Create(deadline);
      mu_.Lock();
      creating_ = false;
      if (stopping_) {
        if (id.ok() && !swept_) orphans_.push_back(*id);
        if (id.ok() && swept_) {
          mu_.Unlock();
          calls_.Destroy(*id, nullptr, options_.request_timeout).IgnoreError();
          mu_.Lock();
        }
        return ClosedError();
      }
      if (!id.ok()) return id.status();
      ApplyLocked(SessionCreated{*std::move(id), sent, publisher_.state()});
      return lifecycle_.session();
    }
    if (!mu_.AwaitWithDeadline(absl::Condition(&ready), wait_until)) {
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError("no instance session before the caller's deadline");
      }
      return absl::UnavailableError("no instance session: the lost one is still being replaced");
    }
  }
}

void SessionKeeper::ReportReachable(bool reachable) {
  const int value = reachable ? 1 : 0;
  if (reachability_.exchange(value, std::memory_order_acq_rel) == value) return;
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  // The latest report, not this one: two reporters may take mu_ in either order. Only the
  // keeper publishes, always under mu_: the state read here stays the last one.
  ApplyLocked(StoreReachability{reachability_.load(std::memory_order_acquire) == 1, MonotonicNow(),
                                publisher_.state()});
}

std::string SessionKeeper::CurrentSessionId() {
  absl::MutexLock lock(&mu_);
  return lifecycle_.session();
}

void SessionKeeper::ReportSessionInvalid(absl::string_view session_id) {
  absl::MutexLock lock(&mu_);
  ApplyLocked(SessionReportedInvalid{std::string(session_id), MonotonicNow()});
}

void SessionKeeper::ApplyLocked(const SessionInput& input) {
  for (SessionAction& action : lifecycle_.Transition(input)) {
    std::visit(
        [&](auto& act) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          using Act = std::decay_t<decltype(act)>;
          if constexpr (std::is_same_v<Act, AnnounceCreated>) {
            AnnounceCreatedLocked(std::move(act));
          } else if constexpr (std::is_same_v<Act, AnnounceLost>) {
            AnnounceLostLocked(std::move(act));
          } else if constexpr (std::is_same_v<Act, PublishState>) {
            publisher_.Publish(act.state);
          } else if constexpr (std::is_same_v<Act, RestoreKeys>) {
            restorer_.NeedRestore();
          } else if constexpr (std::is_same_v<Act, WakeRenewer>) {
            renew_signal_.Notify();
          } else if constexpr (std::is_same_v<Act, StartRenewer>) {
            thread_ = std::thread([this] { Run(); });
            thread_id_ = thread_.get_id();
          } else if constexpr (std::is_same_v<Act, Note>) {
            Log(act.level, "session", act.text);
          }
        },
        action);
  }
}

void SessionKeeper::AnnounceCreatedLocked(AnnounceCreated created) {
  SessionMetrics().session_creations.Get().Increment();
  Log(LogLevel::kInfo, "session", "instance session ", created.session,
      created.first ? " created" : " created to replace a lost one; restoring ephemeral keys");
  restorer_.SessionCreated(created.session);
  publisher_.PublishSessionEvent(
      InstanceSession::Event{InstanceSession::EventKind::kCreated, std::move(created.session)});
}

void SessionKeeper::AnnounceLostLocked(AnnounceLost lost) {
  SessionMetrics().session_losses.Get().Increment();
  Log(LogLevel::kWarn, "session", "instance session ", lost.session, " lost (",
      lost.maybe_alive ? absl::StrCat("no renewal succeeded within ",
                                      absl::FormatDuration(lifecycle_.hold_deadline().loss_after),
                                      " of the last one sent")
                       : "unknown to the server",
      "); creating a new one");
  restorer_.SessionLost(lost.session, lost.maybe_alive);
  publisher_.PublishSessionEvent(
      InstanceSession::Event{InstanceSession::EventKind::kLost, std::move(lost.session)});
}

void SessionKeeper::RestorerDone(const std::string& session) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || lifecycle_.session() != session) return;
  // A bind remembers its key under mu_, so this answer is the last word until mu_ is released.
  if (!keys_.Unbound(session).empty()) {
    restorer_.NeedRestore();
    return;
  }
  ApplyLocked(KeysRestored{});
}

void SessionKeeper::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    const absl::Time now = MonotonicNow();
    const SessionStep step = lifecycle_.Next(now);
    switch (step.kind) {
      case SessionStep::Kind::kRenew:
        RenewLocked(step, now);
        break;
      case SessionStep::Kind::kDeclareLost:  // this thread ran late: the deadline is the deadline
        ApplyLocked(LossDeadlinePassed{now});
        break;
      case SessionStep::Kind::kCreate:
        RecreateLocked();
        break;
      case SessionStep::Kind::kWait: {
        const absl::Duration wait = step.until - now;
        mu_.Unlock();
        renew_signal_.WaitFor(wait);  // on the steady clock: a wall-clock step changes nothing
        mu_.Lock();
        break;
      }
    }
  }
}

void SessionKeeper::RenewLocked(const SessionStep& step, absl::Time sent) {
  mu_.Unlock();
  absl::StatusOr<std::optional<consul::SessionInfo>> renewed =
      calls_.Renew(step.session, step.budget);
  mu_.Lock();
  if (stopping_ || lifecycle_.session() != step.session) return;
  const bool ok = renewed.ok() && renewed->has_value();
  SessionMetrics()
      .session_renewals.At({metrics::Index(ok ? RenewalOutcome::kOk : RenewalOutcome::kFailed)})
      .Increment();
  if (ok) {
    ApplyLocked(SessionRenewed{step.session, sent});
    return;
  }
  if (renewed.ok()) {  // 404: the server no longer knows the session
    ApplyLocked(SessionUnknownToServer{step.session});
    return;
  }
  // The loss rule (a deadline no failure moves) is the life cycle's: session_lifecycle.h.
  ApplyLocked(SessionRenewFailed{step.session, MonotonicNow(), renewed.status().ToString()});
}

void SessionKeeper::RecreateLocked() {
  mu_.Unlock();
  const absl::Time sent = MonotonicNow();
  absl::StatusOr<std::string> id = calls_.Create(absl::InfiniteFuture());
  mu_.Lock();
  if (stopping_) {
    if (id.ok()) orphans_.push_back(*id);  // Stop() destroys it after joining this thread
    return;
  }
  if (!id.ok()) {
    ApplyLocked(SessionCreateFailed{MonotonicNow(), id.status().ToString()});
    return;
  }
  ApplyLocked(SessionCreated{*std::move(id), sent, publisher_.state()});
}

bool SessionKeeper::SleepUnlessStopped(absl::Duration duration) {
  absl::MutexLock lock(&mu_);
  return !mu_.AwaitWithTimeout(absl::Condition(&stopping_), duration);
}

}  // namespace registry
