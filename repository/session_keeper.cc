// SPDX-License-Identifier: Apache-2.0
// repository/session_keeper.cc
//
// The session life cycle and the background threads (renewal, restore). What reachability
// reports publish is in session_keeper_reachability.cc (the publisher, connection_publisher.h,
// delivers it); the ephemeral writes (Bind,
// PersistentWrite, Update and the re-persist pass) in session_keeper_writes.cc.
#include "repository/session_keeper.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/backoff.h"
#include "base/log.h"
#include "base/monotonic.h"
#include "base/plugin_metrics.h"
#include "base/status_macros.h"
#include "consul/session.h"

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
      lifecycle_(options_.ttl, HoldDeadlineFor(options_.ttl, options_.lock_delay)) {
  // Every call and watch exchange of the client tells the connection state.
  reachability_listener_ =
      client_.AddReachabilityListener([this](bool reachable) { ReportReachable(reachable); });
}

SessionKeeper::~SessionKeeper() {
  client_.RemoveReachabilityListener(reachability_listener_);  // not running once it returns
  Stop().IgnoreError();
  std::thread threads[2];
  {
    absl::MutexLock lock(&mu_);
    threads[0] = std::move(thread_);
    threads[1] = std::move(restorer_);
  }
  for (std::thread& thread : threads) {
    if (!thread.joinable()) continue;
    if (thread.get_id() == std::this_thread::get_id()) {
      // The thread would return into a destroyed object: a programming error, not a race.
      Log(LogLevel::kError, "repository", "destroyed from its own listener; aborting");
      std::abort();
    }
    thread.join();
  }
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
  std::thread restorer;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::OkStatus();
    stopping_ = true;
    publisher_.Close();  // listeners and observers hear nothing more
    if (thread_id_ != std::this_thread::get_id()) thread = std::move(thread_);
    restorer = std::move(restorer_);
  }
  renew_signal_.Notify();
  restore_signal_.Notify();
  canceller_.Cancel();  // in-flight renewals, creations and user requests return at once
  if (thread.joinable()) thread.join();
  if (restorer.joinable()) restorer.join();
  std::vector<std::string> doomed;
  std::string live;
  std::vector<std::string> live_keys;  // the ephemeral keys bound to `live`
  {
    absl::MutexLock lock(&mu_);
    swept_ = true;
    doomed = std::move(orphans_);
    live = lifecycle_.Abandon();
    if (!live.empty()) doomed.push_back(live);
    for (std::string& id : doomed_.TakeAll()) doomed.push_back(std::move(id));
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
      ApplyLocked(lifecycle_.Created(*std::move(id), sent, publisher_.state()));
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

std::string SessionKeeper::CurrentSessionId() {
  absl::MutexLock lock(&mu_);
  return lifecycle_.session();
}

void SessionKeeper::ReportSessionInvalid(absl::string_view session_id) {
  absl::MutexLock lock(&mu_);
  ApplyLocked(lifecycle_.CheckNow(std::string(session_id), MonotonicNow()));
}

void SessionKeeper::ApplyLocked(SessionEffects effects) {
  if (effects.created.has_value()) {
    const bool first = effects.start_renewer;
    metrics::Metrics().session_creations.Get().Increment();
    Log(LogLevel::kInfo, "session", "instance session ", *effects.created,
        first ? " created" : " created to replace a lost one; restoring ephemeral keys");
    // Observers (locks) first, then listeners: a listener hearing of the session finds it known.
    publisher_.PublishSessionEvent(
        InstanceSession::Event{InstanceSession::EventKind::kCreated, *std::move(effects.created)});
  }
  if (effects.lost.has_value()) {
    std::string old = std::move(effects.lost->session);
    metrics::Metrics().session_losses.Get().Increment();
    Log(LogLevel::kWarn, "session", "instance session ", old, " lost (",
        effects.lost->maybe_alive
            ? absl::StrCat("no renewal succeeded within ",
                           absl::FormatDuration(lifecycle_.hold_deadline().loss_after),
                           " of the last one sent")
            : "unknown to the server",
        "); creating a new one");
    old_sessions_.push_back(old);
    if (old_sessions_.size() > 8) old_sessions_.pop_front();
    // The server may still have it (a partition, a slow election): destroy it so that it stops
    // holding keys and locks (DestroyDueSessionLocked, once a new session is live).
    if (effects.lost->maybe_alive) doomed_.Add(old, MonotonicNow());
    // Observers first: held locks are marked lost before a listener hears LOST.
    publisher_.PublishSessionEvent(
        InstanceSession::Event{InstanceSession::EventKind::kLost, std::move(old)});
  }
  for (ConnectionState state : effects.publish) publisher_.Publish(state);
  if (effects.restore) NeedRestoreLocked();
  if (effects.check_now) renew_signal_.Notify();
  if (effects.start_renewer) StartThreadLocked();
}

void SessionKeeper::StartThreadLocked() {
  thread_ = std::thread([this] { Run(); });
  thread_id_ = thread_.get_id();
}

void SessionKeeper::NeedRestoreLocked() {
  restore_needed_ = true;
  next_restore_ = MonotonicNow();
  restore_signal_.Notify();
  if (restorer_running_ || stopping_) return;
  // A finished restorer has left its loop (it cleared restorer_running_ under mu_, which it
  // does not take again), so this join is immediate.
  if (restorer_.joinable()) restorer_.join();
  restorer_running_ = true;
  restorer_ = std::thread([this] { Restore(); });
}

absl::Duration SessionKeeper::CreateBackoffLocked(int failures) {
  const absl::Duration first =
      std::clamp(options_.ttl / 10, absl::Milliseconds(50), absl::Seconds(1));
  const absl::Duration max = std::clamp(options_.ttl / 4, first, absl::Seconds(10));
  return BackoffDelay(first, max, failures, bitgen_);
}

absl::Duration SessionKeeper::RenewRetryDelayLocked() {
  // About once a second, as Consul's own client does, so that a renewal retried through a leader
  // election lands as soon as a new leader serves; a short TTL retries sooner.
  const absl::Duration every =
      std::clamp(options_.ttl / 10, absl::Milliseconds(50), absl::Seconds(1));
  return BackoffDelay(every, every, 1, bitgen_);
}

bool SessionKeeper::RestoreDueLocked() const {
  return !lifecycle_.session().empty() && restore_needed_ && MonotonicNow() >= next_restore_;
}

void SessionKeeper::Restore() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    // The lost session first: while it lives it holds the keys the pass would bind.
    if (DestroyDueSessionLocked()) continue;
    if (RestoreDueLocked()) {
      RestorePassLocked();
      continue;
    }
    // Every key is back and no lost session is left: the thread ends until the next loss.
    if (!restore_needed_ && doomed_.empty()) break;
    // Both wait for a live session; its adoption notifies restore_signal_.
    const absl::Time due = lifecycle_.session().empty()
                               ? absl::InfiniteFuture()
                               : std::min(restore_needed_ ? next_restore_ : absl::InfiniteFuture(),
                                          doomed_.NextAttempt());
    const absl::Duration wait = due - MonotonicNow();
    mu_.Unlock();
    restore_signal_.WaitFor(wait);  // on the steady clock; notified when work arrives
    mu_.Lock();
  }
  restorer_running_ = false;
}

bool SessionKeeper::DestroyDueSessionLocked() {
  // Attempts wait for a live session: its create succeeding shows that the cluster answers
  // again, and until then an attempt would only fail.
  if (lifecycle_.session().empty()) return false;
  const std::optional<std::string> id = doomed_.DueAt(MonotonicNow());
  if (!id.has_value()) return false;
  mu_.Unlock();
  const absl::Status destroyed =
      calls_.Destroy(*id, &canceller_, std::min(options_.ttl, options_.request_timeout));
  mu_.Lock();
  if (destroyed.ok()) {
    doomed_.Destroyed(*id);
    Log(LogLevel::kInfo, "session", "lost session ", *id,
        " destroyed; its locks are free after the lock-delay");
  } else {
    doomed_.Failed(*id, MonotonicNow() + RenewRetryDelayLocked());
  }
  return true;
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
        ApplyLocked(lifecycle_.Expired(now));
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
  metrics::Metrics()
      .session_renewals
      .At({metrics::Index(ok ? metrics::RenewalOutcome::kOk : metrics::RenewalOutcome::kFailed)})
      .Increment();
  if (ok) {
    ApplyLocked(lifecycle_.Renewed(step.session, sent));
    return;
  }
  if (renewed.ok()) {  // 404: the server no longer knows the session
    ApplyLocked(lifecycle_.RenewRefused(step.session));
    return;
  }
  // The loss rule (a deadline no failure moves) is the life cycle's: session_lifecycle.h.
  SessionEffects effects =
      lifecycle_.RenewFailed(step.session, MonotonicNow(), RenewRetryDelayLocked());
  if (effects.suspended) {
    Log(LogLevel::kWarn, "session",
        "renewing the instance session failed: ", renewed.status().ToString());
  }
  ApplyLocked(std::move(effects));
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
    const SessionEffects effects =
        lifecycle_.CreateFailed(MonotonicNow(), [this](int failures) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                                                    mu_) { return CreateBackoffLocked(failures); });
    if (effects.log_create_failure) {
      Log(LogLevel::kWarn, "session",
          "creating the instance session failed: ", id.status().ToString());
    }
    return;
  }
  ApplyLocked(lifecycle_.Created(*std::move(id), sent, publisher_.state()));
}

bool SessionKeeper::SleepUnlessStopped(absl::Duration duration) {
  absl::MutexLock lock(&mu_);
  return !mu_.AwaitWithTimeout(absl::Condition(&stopping_), duration);
}

}  // namespace registry
