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
  consul::Client& client = core_.client();
  // Every request of this call is cancelled with the manager and cut at request_deadline.
  consul::Canceller call(core_.canceller(), request_deadline);
  Unreachable unreachable(core_.max_unreachable(), core_.lock_retry());
  bool attempted = false;
  bool quick_retry = true;  // a key seen free after a refused acquire is retried once at once
  std::optional<consul::KvGetResult> held;  // last read, while another session holds the key

  // Whatever the outcome, no failed attempt may leave the key bound to the instance session:
  // the caller releases `*unknown` (an acquire whose answer was lost) unless the lock is held.
  auto finish = [&](absl::StatusOr<std::optional<RemoteHold>> result) {
    if (result.ok() && result->has_value()) unknown->clear();
    return result;
  };
  auto closed = [&] { return Prefixed(op, core_.closed_status()); };
  // After a failed request: OK to try again (after a back-off), or the status to give up with.
  absl::Time started;  // when the current attempt's requests began
  auto retry_after = [&](const absl::Status& error) -> absl::Status {
    if (absl::IsCancelled(error) || !core_.closed_status().ok()) return closed();
    // Cut by the caller's deadline (within the transport's millisecond): the loop gives up
    // (false), Consul was not unreachable. A cut by the unreachable budget is a failure below.
    if (absl::IsDeadlineExceeded(error) &&
        absl::Now() + absl::Milliseconds(1) >= request_deadline) {
      attempted = true;
      return absl::OkStatus();
    }
    if (!IsTransient(error)) return Prefixed(op, error);
    if (absl::Status give_up = unreachable.Failure(error, started); !give_up.ok()) {
      return Prefixed(op, give_up);
    }
    if (!core_.SleepUntil(std::min(deadline, absl::Now() + unreachable.Backoff()))) {
      return closed();
    }
    return absl::OkStatus();
  };

  for (;;) {
    const absl::Time now = absl::Now();
    started = now;
    // The client retries a failing request within its timeout: no request of this attempt may
    // outlast what is left of the time granted to an unreachable Consul. (A blocking read is
    // not retried by the client, and may rightly block for longer.)
    consul::Canceller attempt(&call, std::min(request_deadline, unreachable.GiveUpAt(now)));
    consul::Canceller* canceller = &attempt;
    if (attempted && now >= deadline) {
      if (unreachable.failing()) {
        return finish(Prefixed(op, absl::UnavailableError(absl::StrCat(
                                       "Consul could not be reached before the deadline: ",
                                       unreachable.last().message()))));
      }
      return finish(std::optional<RemoteHold>());
    }

    if (held.has_value()) {
      // Another session holds the key: block until it changes or the time is up.
      consul::QueryOptions query;
      query.index = held->meta.index;
      query.wait = BlockingWait(deadline - now, core_.block_query_wait());
      absl::StatusOr<consul::KvGetResult> read = client.KvGet(key_, query, &call);
      if (!read.ok()) {
        if (absl::Status give_up = retry_after(read.status()); !give_up.ok()) {
          return finish(give_up);
        }
        continue;
      }
      unreachable.Success();
      if (HeldByOther(*read, "")) {
        held = *std::move(read);  // unchanged, or taken by yet another session: wait again
      } else {
        held.reset();
      }
      continue;
    }

    absl::StatusOr<std::string> session = core_.SessionForAttempt(deadline, request_deadline);
    if (!session.ok()) {
      if (absl::Status give_up = retry_after(session.status()); !give_up.ok()) {
        return finish(give_up);
      }
      continue;
    }
    attempted = true;
    if (session->empty()) {  // a lost session is still being replaced: Consul may be down
      if (absl::Status give_up = unreachable.Failure(
              absl::UnavailableError("no live instance session (the lost one is being replaced)"),
              now);
          !give_up.ok()) {
        return finish(Prefixed(op, give_up));
      }
      continue;
    }

    // A txn "lock" (the same as ?acquire=) answers with the key's ModifyIndex: the hold's fence.
    const consul::TxnOp acquire[] = {
        consul::TxnOp::Lock(key_, core_.options().holder_value, *session)};
    absl::StatusOr<consul::TxnResult> acquired = client.Txn(acquire, canceller);
    if (acquired.ok() ? !acquired->committed && consul::TxnErrorSays(*acquired, "invalid session")
                      : IsInvalidSession(acquired.status())) {
      core_.ReportSessionInvalid(*session);  // the next attempt waits for its successor
      if (absl::Status give_up =
              unreachable.Failure(absl::FailedPreconditionError(absl::StrCat(
                                      "Consul does not know the instance session ", *session)),
                                  now);
          !give_up.ok()) {
        return finish(Prefixed(op, give_up));
      }
      continue;
    }
    if (!acquired.ok()) {
      const absl::Status& error = acquired.status();
      if (!absl::IsCancelled(error) && !consul::IsNotSent(error)) *unknown = *session;
      if (absl::Status give_up = retry_after(error); !give_up.ok()) return finish(give_up);
      continue;
    }
    unreachable.Success();
    if (acquired->committed && !acquired->results.empty()) {
      return std::optional<RemoteHold>(RemoteHold{*session, acquired->results[0].modify_index});
    }
    unknown->clear();  // refused: an earlier lost acquire did not leave the key ours either
    if (absl::Now() >= deadline) return std::optional<RemoteHold>();

    // Refused: held by another session (wait for a change) or under lock-delay (retry later).
    absl::StatusOr<consul::KvGetResult> read =
        client.KvGet(key_, consul::ConsistentRead(), canceller);
    if (!read.ok()) {
      if (absl::Status give_up = retry_after(read.status()); !give_up.ok()) {
        return finish(give_up);
      }
      continue;
    }
    unreachable.Success();
    if (read->entry.has_value() && read->entry->session == *session) {
      return std::optional<RemoteHold>(RemoteHold{*session, read->entry->modify_index});  // ours
    }
    if (HeldByOther(*read, *session)) {
      held = *std::move(read);
      quick_retry = true;
      continue;
    }
    if (quick_retry) {  // released between the acquire and the read: try again now
      quick_retry = false;
      continue;
    }
    // Free, yet refused twice: lock-delay. A timed retry, never a blocking wait.
    if (!core_.SleepUntil(std::min(deadline, absl::Now() + core_.lock_retry()))) {
      return finish(closed());
    }
  }
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
