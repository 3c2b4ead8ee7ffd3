// lock/consul_mutex.cc
//
// The Consul mutex: its acquire rounds (a txn lock, then blocking reads while another session
// holds the key, timed retries under lock-delay), fenced release, and the release of an acquire
// whose outcome is unknown.
#include "lock/consul_mutex.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/kv.h"
#include "consul/query.h"
#include "consul/transport.h"
#include "consul/txn.h"

namespace registry::lock {
namespace {

// True if `read` shows the key held by a session other than `own`.
bool HeldByOther(const consul::KvGetResult& read, const std::string& own) {
  return read.entry.has_value() && !read.entry->session.empty() && read.entry->session != own;
}

// One ConsulMutex::Acquire call.
class MutexAcquisition final : public AcquireLoop {
 public:
  MutexAcquisition(LockCore& core, const std::string& name, const std::string& key,
                   absl::Time deadline, absl::Time request_deadline, absl::string_view op,
                   std::string* pending_release)
      : AcquireLoop(core, name, deadline, request_deadline, op, pending_release), key_(key) {}

 private:
  std::optional<AcquireResult> Round(absl::Time now) override {
    if (held_.has_value()) return WaitWhileHeld(now);
    return TryOnce(now);
  }

  // Another session holds the key: block until it changes or the time is up.
  std::optional<AcquireResult> WaitWhileHeld(absl::Time now) {
    absl::StatusOr<consul::KvGetResult> read = BlockingRead(key_, held_->meta.index, now);
    if (!read.ok()) return RetryAfter(read.status());
    Reached();
    if (HeldByOther(*read, "")) {
      held_ = *std::move(read);  // unchanged, or taken by yet another session: wait again
    } else {
      held_.reset();
    }
    return std::nullopt;
  }

  // An acquire with the instance session, then a look at the key if it was refused.
  std::optional<AcquireResult> TryOnce(absl::Time now) {
    consul::Canceller attempt(call(), AttemptDeadline(now));
    std::optional<AcquireResult> round;
    const std::string session = SessionForAttempt(&round);
    if (session.empty()) return round;
    // A txn "lock" (the same as ?acquire=) answers with the key's ModifyIndex: the hold's fence.
    const consul::TxnOp acquire[] = {
        consul::TxnOp::Lock(key_, core().options().holder_value, session)};
    absl::StatusOr<consul::TxnResult> acquired = core().client().Txn(acquire, &attempt);
    if (SessionRefused(acquired, session)) return AfterSessionRefused(session);
    if (!acquired.ok()) {
      const absl::Status& error = acquired.status();
      if (!absl::IsCancelled(error) && !consul::IsNotSent(error)) set_pending_release(session);
      return RetryAfter(error);
    }
    Reached();
    if (acquired->committed && !acquired->results.empty()) {
      return AcquireResult(RemoteHold{session, key_, acquired->results[0].modify_index});
    }
    clear_pending_release();  // refused: an earlier lost acquire did not leave the key ours either
    if (absl::Now() >= deadline()) return AcquireResult(std::optional<RemoteHold>());
    return LookAfterRefusal(session, &attempt);
  }

  // Refused: held by another session (wait for a change) or under lock-delay (retry later).
  std::optional<AcquireResult> LookAfterRefusal(const std::string& session,
                                                consul::Canceller* canceller) {
    absl::StatusOr<consul::KvGetResult> read =
        core().client().KvGet(key_, consul::ConsistentRead(), canceller);
    if (!read.ok()) return RetryAfter(read.status());
    Reached();
    if (read->entry.has_value() && read->entry->session == session) {
      return AcquireResult(RemoteHold{session, key_, read->entry->modify_index});  // ours after all
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
    return PauseUntil(absl::Now() + core().lock_retry());
  }

  const std::string& key_;
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
                                                               std::string* pending_release) {
  return MutexAcquisition(core_, name_, key_, deadline, request_deadline, op, pending_release)
      .Run();
}

absl::StatusOr<bool> ConsulMutex::FencedRelease(const RemoteHold& hold) {
  const consul::TxnOp release[] = {consul::TxnOp::CheckIndex(key_, hold.index),
                                   consul::TxnOp::Unlock(key_, "", hold.session)};
  ASSIGN_OR_RETURN(consul::TxnResult result, core_.client().Txn(release, core_.canceller()));
  return result.committed;
}

absl::Status ConsulMutex::Release(const RemoteHold& hold) {
  RemoteHold current = hold;
  bool reread = false;
  return ReleaseWithRetries(
      core_,
      [&]() -> absl::StatusOr<bool> {
        ASSIGN_OR_RETURN(bool released, FencedRelease(current));
        // Refused: the key is no longer at this hold's index. Normally it is not ours any more;
        // but if it is (someone rewrote the key during the hold), release it at its new index:
        // tier 1 is still this thread's, so no later hold of this process can own it yet.
        if (released || std::exchange(reread, true)) return true;
        absl::StatusOr<consul::KvGetResult> read =
            core_.client().KvGet(key_, consul::ConsistentRead(), core_.canceller());
        if (!read.ok() || !read->entry.has_value() || read->entry->session != hold.session) {
          return true;  // not bound to the session
        }
        current.index = read->entry->modify_index;
        return false;
      },
      [&](const absl::Status& error) { return Prefixed("Unlock", error); });
}

void ConsulMutex::ReleasePending(const std::string& session) {
  // Tier 1 is still reserved, so no hold of this process can own the key now: if it is bound to
  // `session`, that is the lost acquire, released at the index read (fenced like any release).
  // A cut acquire may still be applied after the first look, hence a second one. Best effort:
  // if this fails too, the key goes when the session does.
  for (int look = 0; look < 2; ++look) {
    absl::StatusOr<consul::KvGetResult> read =
        core_.client().KvGet(key_, consul::ConsistentRead(), core_.canceller());
    if (!read.ok()) return;
    if (read->entry.has_value() && read->entry->session == session) {
      FencedRelease(RemoteHold{session, key_, read->entry->modify_index}).IgnoreError();
    }
  }
}

}  // namespace registry::lock
