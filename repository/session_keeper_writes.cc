// SPDX-License-Identifier: Apache-2.0
// repository/session_keeper_writes.cc
//
// Ephemeral writes and their ordering against persistent writes (see session_keeper.h), and the
// pass that binds remembered keys to a new session.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "base/monotonic.h"
#include "base/plugin_metrics.h"
#include "base/status_macros.h"
#include "consul/canceller.h"
#include "consul/transport.h"
#include "consul/txn.h"
#include "repository/session_keeper.h"

namespace registry {

absl::Status SessionKeeper::PersistEphemeral(absl::string_view consul_key,
                                             absl::string_view value) {
  return Bind(consul_key, value, /*exclusive=*/false).status();
}

absl::StatusOr<bool> SessionKeeper::PersistExclusiveEphemeral(absl::string_view consul_key,
                                                              absl::string_view value) {
  return Bind(consul_key, value, /*exclusive=*/true);
}

absl::StatusOr<bool> SessionKeeper::Bind(absl::string_view consul_key, absl::string_view value,
                                         bool exclusive) {
  // Whoever held the key last died at most one lock-delay ago (or holds it still, which does
  // not involve a delay), so an attempt sent after `deadline` that is still refused means
  // something else is wrong. Judged by when an attempt was sent, not when its answer came: one
  // sent inside the delay and answered late (a slow server) earns one more try.
  const absl::Time deadline = absl::Now() + options_.lock_delay + 2 * options_.lock_retry;
  int quick_retries = 0;
  for (;;) {
    ASSIGN_OR_RETURN(std::string session, AcquireSessionId(absl::InfiniteFuture()));
    BindOutcome outcome;
    const absl::Time sent = absl::Now();
    {
      absl::WriterMutexLock write_lock(&keys_.write_order());
      bool held_before = false;  // already bound to this session with this value
      {
        absl::MutexLock lock(&mu_);
        if (stopping_) return ClosedError();
        if (lifecycle_.session() != session) continue;  // replaced meanwhile: use the new one
        const std::optional<RememberedKeys::Key> known = keys_.Find(consul_key);
        held_before = known.has_value() && known->bound_session == session && known->value == value;
      }
      absl::StatusOr<BindOutcome> attempt =
          exclusive
              ? AttemptCreateExclusive(client_, consul_key, value, session, &canceller_)
              : AttemptBind(
                    client_,
                    BindRequest{std::string(consul_key), std::string(value), session, false, {}},
                    &canceller_);
      if (!attempt.ok() && !stopped() && consul::IsUnknownOutcome(attempt.status())) {
        // A checked txn (a takeover, an exclusive create) is never resent: a resend would fail
        // against its own first apply. So a lost reply leaves its outcome unknown: learn it from
        // the key instead of failing a write that may have landed (and would then be bound but
        // not remembered).
        absl::StatusOr<BindOutcome> resolved = ResolveUnknownOutcome(
            client_, consul_key, value, session, exclusive && held_before, &canceller_);
        if (resolved.ok()) attempt = resolved;
      }
      if (!attempt.ok()) return stopped() ? ClosedError() : attempt.status();
      outcome = *attempt;
      if (outcome == BindOutcome::kBound) {
        absl::MutexLock lock(&mu_);
        if (stopping_) return ClosedError();
        keys_.Remember(consul_key, RememberedKeys::Key{std::string(value), exclusive, session});
        if (lifecycle_.session() != session) {
          // The session was lost while the txn ran: bind the key to the new one too.
          NeedRestoreLocked();
          ApplyLocked(lifecycle_.CheckNow(lifecycle_.session(), MonotonicNow()));
        }
        return true;
      }
      if (outcome == BindOutcome::kExists) return false;
    }
    if (outcome == BindOutcome::kChanged && ++quick_retries <= 2) {
      continue;  // a concurrent writer got in between: read again at once
    }
    if (outcome == BindOutcome::kBadSession) {
      ReportSessionInvalid(session);
      absl::MutexLock lock(&mu_);
      auto replaced = [this, &session]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || lifecycle_.session() != session;
      };
      mu_.AwaitWithDeadline(absl::Condition(&replaced), deadline);
    }
    if (sent >= deadline) {
      return absl::UnavailableError(absl::StrCat(
          "ephemeral key '", consul_key, "' could not be bound to the instance session within ",
          absl::FormatDuration(options_.lock_delay + 2 * options_.lock_retry),
          " (last attempt: ", BindOutcomeName(outcome), ")"));
    }
    const absl::Duration pause = std::min(options_.lock_retry, deadline - absl::Now());
    if (outcome != BindOutcome::kBadSession && pause > absl::ZeroDuration() &&
        !SleepUnlessStopped(pause)) {
      return ClosedError();
    }
  }
}

void SessionKeeper::RestorePassLocked() {
  const std::string session = lifecycle_.session();
  const std::vector<std::string> pending = keys_.Unbound(session);
  if (pending.empty()) {
    restore_needed_ = false;
    SessionEffects effects = lifecycle_.RestoreDone();
    if (!effects.publish.empty()) {
      Log(LogLevel::kInfo, "session", "every ephemeral key is bound to session ", session);
    }
    ApplyLocked(std::move(effects));
    return;
  }
  metrics::Metrics().session_restore_passes.Get().Increment();
  const absl::flat_hash_set<std::string> own_sessions(old_sessions_.begin(), old_sessions_.end());
  bool retry_later = false;
  bool stop = false;
  size_t next = 0;
  while (next < pending.size() && !stop) {
    // Up to kMaxKeysPerBatch keys still to bind, in one transaction (mu_ is released for the
    // request; the write order puts it after user writes, one batch at a time).
    std::vector<BindRequest> batch;
    for (; next < pending.size() && batch.size() < kMaxKeysPerBatch; ++next) {
      const std::optional<RememberedKeys::Key> key = keys_.Find(pending[next]);
      if (!key.has_value() || key->bound_session == session) continue;
      batch.push_back(
          BindRequest{pending[next], key->value, session, key->exclusive, own_sessions});
    }
    if (batch.empty()) break;
    mu_.Unlock();
    {
      absl::WriterMutexLock write_lock(&keys_.write_order());
      RestoreBatch(std::move(batch), session, &retry_later, &stop);
    }
    mu_.Lock();
    if (stopping_ || lifecycle_.session() != session) return;
  }
  next_restore_ = MonotonicNow() + (retry_later ? options_.lock_retry : absl::ZeroDuration());
}

void SessionKeeper::RestoreBatch(std::vector<BindRequest> batch, const std::string& session,
                                 bool* retry_later, bool* stop) {
  while (!batch.empty() && !*stop) {
    {
      // A user write since the batch was made may have changed or dropped a key.
      absl::MutexLock lock(&mu_);
      if (stopping_ || lifecycle_.session() != session) return;
      std::erase_if(batch, [this, &session](BindRequest& request) {
        const std::optional<RememberedKeys::Key> key = keys_.Find(request.consul_key);
        if (!key.has_value()) return true;
        request.value = key->value;
        return key->bound_session == session;
      });
    }
    if (batch.empty()) return;
    absl::StatusOr<BatchBindOutcome> outcome = AttemptCreateBatch(client_, batch, &canceller_);
    if (!outcome.ok()) {  // unreachable, or stopping: the next pass tries again
      *retry_later = *stop = true;
      return;
    }
    if (outcome->outcome != BindOutcome::kExists) {
      for (const BindRequest& request : batch) {
        RecordRestore(request.consul_key, session, outcome->outcome, retry_later, stop);
      }
      return;
    }
    // Keys that exist (taken by another instance, or still held by the lost session): one by
    // one, reading each; then the rest of the batch again.
    std::vector<bool> done(batch.size(), false);
    for (size_t index : outcome->existing) {
      absl::StatusOr<BindOutcome> single = AttemptBind(client_, batch[index], &canceller_);
      if (!single.ok()) {
        *retry_later = *stop = true;
        return;
      }
      RecordRestore(batch[index].consul_key, session, *single, retry_later, stop);
      done[index] = true;
    }
    std::vector<BindRequest> rest;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!done[i]) rest.push_back(std::move(batch[i]));
    }
    batch = std::move(rest);
  }
}

void SessionKeeper::RecordRestore(const std::string& key, const std::string& session,
                                  BindOutcome outcome, bool* retry_later, bool* stop) {
  absl::MutexLock lock(&mu_);
  switch (outcome) {
    case BindOutcome::kBound:
      keys_.MarkBound(key, session);
      metrics::Metrics().session_keys_restored.Get().Increment();
      return;
    case BindOutcome::kExists:
      Log(LogLevel::kWarn, "session", "ephemeral key '", key, "' now belongs to another instance");
      keys_.Forget(key);
      return;
    case BindOutcome::kBadSession:
      // Check the session at once; the next session restarts the pass.
      ApplyLocked(lifecycle_.CheckNow(session, MonotonicNow()));
      *stop = true;
      return;
    case BindOutcome::kLockDelay:
    case BindOutcome::kChanged:
      *retry_later = true;
      *stop = true;  // the lost session's keys share their lock-delay: wait it out together
      return;
  }
}

}  // namespace registry
