// SPDX-License-Identifier: Apache-2.0
// repository/session_keeper_writes.cc
//
// Ephemeral writes and their ordering against persistent writes (see session_keeper.h).
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "base/monotonic.h"
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
          restorer_.NeedRestore();
          ApplyLocked(SessionReportedInvalid{lifecycle_.session(), MonotonicNow()});
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

}  // namespace registry
