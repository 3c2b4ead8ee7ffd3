// lock/consul_mutex.cc
//
// The Consul mutex: acquire loop (a txn lock, then blocking reads while another session holds
// the key, timed retries under lock-delay), fenced release, and the release of an acquire whose
// outcome is unknown.
#include "lock/consul_mutex.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/backoff.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/errors.h"
#include "consul/kv.h"
#include "consul/query.h"
#include "consul/transport.h"
#include "consul/txn.h"

namespace registry::lock {
namespace {

constexpr absl::Duration kFirstBackoff = absl::Milliseconds(50);

// Failures that another attempt may cure: no server answered, a 5xx, a timeout.
bool IsTransient(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsInternal(status) ||
         absl::IsDeadlineExceeded(status) || absl::IsDataLoss(status);
}

// Consul's 500 'Invalid session "<id>"': the session is gone (errors.h maps it so).
bool IsInvalidSession(const absl::Status& status) {
  return absl::IsFailedPrecondition(status) && consul::HttpStatusOf(status) == 500;
}

// The server-side wait of a blocking read that must end by a deadline `remaining` away: Consul
// answers up to wait/16 after the wait (jitter), so ask for 16/17 of the remaining time; the
// loop asks again with what is left. Without a deadline, the configured wait.
absl::Duration BlockingWait(absl::Duration remaining, absl::Duration configured) {
  if (remaining == absl::InfiniteDuration()) return configured;
  return std::min(configured, remaining * 16 / 17);
}

// True if `read` shows the key held by a session other than `own`.
bool HeldByOther(const consul::KvGetResult& read, const std::string& own) {
  return read.entry.has_value() && !read.entry->session.empty() && read.entry->session != own;
}

// How long requests have been failing in a row, with the back-off between attempts.
class Unreachable {
 public:
  Unreachable(absl::Duration limit, absl::Duration max_backoff)
      : limit_(limit), max_backoff_(std::max(max_backoff, kFirstBackoff)) {}

  void Success() {
    since_ = absl::InfiniteFuture();
    failures_ = 0;
  }

  // Records `error` of a request made at `started` (the client retries a request within its
  // timeout, so failing began then). Returns Unavailable once requests have failed for longer
  // than the limit.
  absl::Status Failure(const absl::Status& error, absl::Time started) {
    const absl::Time now = absl::Now();
    if (failures_++ == 0) since_ = std::min(started, now);
    last_ = error;
    if (now - since_ < limit_) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat(
        "Consul unreachable for ", absl::FormatDuration(now - since_), ": ", error.message()));
  }

  bool failing() const { return failures_ > 0; }
  // When a request made at `now` must end for the limit to hold.
  absl::Time GiveUpAt(absl::Time now) const { return (failing() ? since_ : now) + limit_; }
  const absl::Status& last() const { return last_; }

  absl::Duration Backoff() { return BackoffDelay(kFirstBackoff, max_backoff_, failures_, gen_); }

 private:
  const absl::Duration limit_;
  const absl::Duration max_backoff_;
  absl::Time since_ = absl::InfiniteFuture();
  int failures_ = 0;
  absl::Status last_;
  absl::BitGen gen_;
};

using AcquireResult = absl::StatusOr<std::optional<RemoteHold>>;

// One ConsulMutex::Acquire call: the loop's state and its steps. Each step returns the call's
// result, or nullopt to go round again.
class Acquisition {
 public:
  Acquisition(LockCore& core, const std::string& name, const std::string& key, absl::Time deadline,
              absl::Time request_deadline, absl::string_view op, std::string* unknown)
      : core_(core),
        name_(name),
        key_(key),
        deadline_(deadline),
        request_deadline_(request_deadline),
        op_(op),
        unknown_(unknown),
        call_(core.canceller(), request_deadline),
        unreachable_(core.max_unreachable(), core.lock_retry()) {}

  AcquireResult Run() {
    for (;;) {
      std::optional<AcquireResult> result = Step();
      if (!result.has_value()) continue;
      // Whatever the outcome, no failed attempt may leave the key bound to the instance session:
      // the caller releases `*unknown_` (an acquire whose answer was lost) unless it holds.
      if (result->ok() && (*result)->has_value()) unknown_->clear();
      return *std::move(result);
    }
  }

 private:
  std::optional<AcquireResult> Step() {
    const absl::Time now = absl::Now();
    started_ = now;
    if (attempted_ && now >= deadline_) return GiveUpAtDeadline();
    if (held_.has_value()) return WaitWhileHeld(now);
    return TryOnce(now);
  }

  AcquireResult GiveUpAtDeadline() {
    if (!unreachable_.failing()) return std::optional<RemoteHold>();
    return Prefixed(absl::UnavailableError(absl::StrCat(
        "Consul could not be reached before the deadline: ", unreachable_.last().message())));
  }

  // Another session holds the key: block until it changes or the time is up.
  std::optional<AcquireResult> WaitWhileHeld(absl::Time now) {
    consul::QueryOptions query;
    query.index = held_->meta.index;
    query.wait = BlockingWait(deadline_ - now, core_.block_query_wait());
    absl::StatusOr<consul::KvGetResult> read = core_.client().KvGet(key_, query, &call_);
    if (!read.ok()) return RetryAfter(read.status());
    unreachable_.Success();
    if (HeldByOther(*read, "")) {
      held_ = *std::move(read);  // unchanged, or taken by yet another session: wait again
    } else {
      held_.reset();
    }
    return std::nullopt;
  }

  // An acquire with the instance session, then a look at the key if it was refused.
  std::optional<AcquireResult> TryOnce(absl::Time now) {
    // The client retries a failing request within its timeout: no request of this attempt may
    // outlast what is left of the time granted to an unreachable Consul. (A blocking read is
    // not retried by the client, and may rightly block for longer.)
    consul::Canceller attempt(&call_, std::min(request_deadline_, unreachable_.GiveUpAt(now)));
    absl::StatusOr<std::string> session = core_.SessionForAttempt(deadline_, request_deadline_);
    if (!session.ok()) return RetryAfter(session.status());
    attempted_ = true;
    if (session->empty()) {  // a lost session is still being replaced: Consul may be down
      return CountFailure(
          absl::UnavailableError("no live instance session (the lost one is being replaced)"));
    }
    // A txn "lock" (the same as ?acquire=) answers with the key's ModifyIndex: the hold's fence.
    const consul::TxnOp acquire[] = {
        consul::TxnOp::Lock(key_, core_.options().holder_value, *session)};
    absl::StatusOr<consul::TxnResult> acquired = core_.client().Txn(acquire, &attempt);
    if (acquired.ok() ? !acquired->committed && consul::TxnErrorSays(*acquired, "invalid session")
                      : IsInvalidSession(acquired.status())) {
      core_.ReportSessionInvalid(*session);  // the next attempt waits for its successor
      return CountFailure(absl::FailedPreconditionError(
          absl::StrCat("Consul does not know the instance session ", *session)));
    }
    if (!acquired.ok()) {
      const absl::Status& error = acquired.status();
      if (!absl::IsCancelled(error) && !consul::IsNotSent(error)) *unknown_ = *session;
      return RetryAfter(error);
    }
    unreachable_.Success();
    if (acquired->committed && !acquired->results.empty()) {
      return AcquireResult(RemoteHold{*session, acquired->results[0].modify_index});
    }
    unknown_->clear();  // refused: an earlier lost acquire did not leave the key ours either
    if (absl::Now() >= deadline_) return AcquireResult(std::optional<RemoteHold>());
    return LookAfterRefusal(*session, &attempt);
  }

  // Refused: held by another session (wait for a change) or under lock-delay (retry later).
  std::optional<AcquireResult> LookAfterRefusal(const std::string& session,
                                                consul::Canceller* canceller) {
    absl::StatusOr<consul::KvGetResult> read =
        core_.client().KvGet(key_, consul::ConsistentRead(), canceller);
    if (!read.ok()) return RetryAfter(read.status());
    unreachable_.Success();
    if (read->entry.has_value() && read->entry->session == session) {
      return AcquireResult(RemoteHold{session, read->entry->modify_index});  // ours after all
    }
    if (HeldByOther(*read, session)) {
      held_ = *std::move(read);
      quick_retry_ = true;
      return std::nullopt;
    }
    if (quick_retry_) {  // released between the acquire and the read: try again now
      quick_retry_ = false;
      return std::nullopt;
    }
    // Free, yet refused twice: lock-delay. A timed retry, never a blocking wait.
    if (!core_.SleepUntil(std::min(deadline_, absl::Now() + core_.lock_retry()))) return Closed();
    return std::nullopt;
  }

  // After a failed request: nullopt to try again (after a back-off), or the result to give up
  // with.
  std::optional<AcquireResult> RetryAfter(const absl::Status& error) {
    if (absl::IsCancelled(error) || !core_.closed_status().ok()) return Closed();
    // Cut by the caller's deadline (within the transport's millisecond): the loop gives up
    // (false), Consul was not unreachable. A cut by the unreachable budget is a failure below.
    if (absl::IsDeadlineExceeded(error) &&
        absl::Now() + absl::Milliseconds(1) >= request_deadline_) {
      attempted_ = true;
      return std::nullopt;
    }
    if (!IsTransient(error)) return AcquireResult(Prefixed(error));
    if (std::optional<AcquireResult> give_up = CountFailure(error); give_up.has_value()) {
      return give_up;
    }
    if (!core_.SleepUntil(std::min(deadline_, absl::Now() + unreachable_.Backoff()))) {
      return Closed();
    }
    return std::nullopt;
  }

  // Counts `error` against max_unreachable: the result to give up with once it is spent.
  std::optional<AcquireResult> CountFailure(const absl::Status& error) {
    absl::Status give_up = unreachable_.Failure(error, started_);
    if (give_up.ok()) return std::nullopt;
    return AcquireResult(Prefixed(give_up));
  }

  AcquireResult Closed() { return Prefixed(core_.closed_status()); }

  absl::Status Prefixed(const absl::Status& status) const {
    return registry::Prefixed(absl::StrCat(op_, ": lock '", name_, "'"), status);
  }

  LockCore& core_;
  const std::string& name_;
  const std::string& key_;
  const absl::Time deadline_;
  const absl::Time request_deadline_;
  const absl::string_view op_;
  std::string* const unknown_;
  // Every request of this call is cancelled with the manager and cut at request_deadline.
  consul::Canceller call_;
  Unreachable unreachable_;
  absl::Time started_;       // when the current round's requests began
  bool attempted_ = false;   // an acquire was tried (or cut by the caller's deadline)
  bool quick_retry_ = true;  // a key seen free after a refused acquire is retried once at once
  std::optional<consul::KvGetResult> held_;  // last read, while another session holds the key
};

}  // namespace

ConsulMutex::ConsulMutex(LockCore& core, std::string name, std::string key)
    : core_(core), name_(std::move(name)), key_(std::move(key)) {}

absl::Status ConsulMutex::Prefixed(absl::string_view op, const absl::Status& status) const {
  return registry::Prefixed(absl::StrCat(op, ": lock '", name_, "'"), status);
}

absl::StatusOr<std::optional<RemoteHold>> ConsulMutex::Acquire(absl::Time deadline,
                                                               absl::Time request_deadline,
                                                               absl::string_view op,
                                                               std::string* unknown) {
  return Acquisition(core_, name_, key_, deadline, request_deadline, op, unknown).Run();
}

absl::StatusOr<bool> ConsulMutex::FencedRelease(const RemoteHold& hold) {
  const consul::TxnOp release[] = {consul::TxnOp::CheckIndex(key_, hold.index),
                                   consul::TxnOp::Unlock(key_, "", hold.session)};
  ASSIGN_OR_RETURN(consul::TxnResult result, core_.client().Txn(release, core_.canceller()));
  return result.committed;
}

absl::Status ConsulMutex::Release(const RemoteHold& hold) {
  Unreachable unreachable(core_.max_unreachable(), core_.lock_retry());
  RemoteHold current = hold;
  bool reread = false;
  for (;;) {
    const absl::Time attempt_started = absl::Now();
    absl::StatusOr<bool> released = FencedRelease(current);
    if (released.ok() && !*released && !reread) {
      // Refused: the key is no longer at this hold's index. Normally it is not ours any more;
      // but if it is (someone rewrote the key during the hold), release it at its new index:
      // tier 1 is still this thread's, so no later hold of this process can own it yet.
      reread = true;
      absl::StatusOr<consul::KvGetResult> read =
          core_.client().KvGet(key_, consul::ConsistentRead(), core_.canceller());
      if (read.ok() && read->entry.has_value() && read->entry->session == hold.session) {
        current.index = read->entry->modify_index;
        continue;
      }
    }
    // Refused: the key was no longer ours; either way it is not bound to the session now.
    if (released.ok()) return absl::OkStatus();
    const absl::Status& error = released.status();
    // The session is gone (and its keys with it), or the repository is closing (and destroys
    // the session).
    if (IsInvalidSession(error) || absl::IsCancelled(error)) return absl::OkStatus();
    if (!IsTransient(error)) return Prefixed("Unlock", error);
    if (absl::Status give_up = unreachable.Failure(error, attempt_started); !give_up.ok()) {
      return Prefixed("Unlock", give_up);
    }
    if (!core_.SleepUntil(absl::Now() + unreachable.Backoff())) return absl::OkStatus();
  }
}

void ConsulMutex::ReleaseAfterUnknownAcquire(const std::string& session) {
  // Tier 1 is still reserved, so no hold of this process can own the key now: if it is bound to
  // `session`, that is the lost acquire, released at the index read (fenced like any release).
  // A cut acquire may still be applied after the first look, hence a second one. Best effort:
  // if this fails too, the key goes when the session does.
  for (int look = 0; look < 2; ++look) {
    absl::StatusOr<consul::KvGetResult> read =
        core_.client().KvGet(key_, consul::ConsistentRead(), core_.canceller());
    if (!read.ok()) return;
    if (read->entry.has_value() && read->entry->session == session) {
      FencedRelease(RemoteHold{session, read->entry->modify_index}).IgnoreError();
    }
  }
}

}  // namespace registry::lock
