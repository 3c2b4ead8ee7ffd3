// SPDX-License-Identifier: Apache-2.0
// lock/key_acquisition.cc
#include "lock/key_acquisition.h"

#include <optional>
#include <string>
#include <utility>

#include "consul/query.h"
#include "consul/transport.h"
#include "consul/txn.h"

namespace registry::lock {
namespace {

// True if `read` shows the key held by a session other than `own`.
bool HeldByOther(const consul::KvGetResult& read, const std::string& own) {
  return read.entry.has_value() && !read.entry->session.empty() && read.entry->session != own;
}

}  // namespace

std::optional<AcquireResult> KeyAcquisition::Round(absl::Time now) {
  if (held_.has_value()) return WaitWhileHeld(now);
  return TryOnce(now);
}

std::optional<AcquireResult> KeyAcquisition::WaitWhileHeld(absl::Time now) {
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

std::optional<AcquireResult> KeyAcquisition::TryOnce(absl::Time now) {
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
    if (!absl::IsCancelled(error) && !consul::IsNotSent(error)) {
      set_pending_release(PendingAfterUnknownAcquire(session));
    }
    return RetryAfter(error);
  }
  Reached();
  if (acquired->committed && !acquired->results.empty()) {
    return AcquireResult(RemoteHold{session, key_, acquired->results[0].modify_index});
  }
  // Refused: an earlier lost acquire did not leave the key ours either.
  set_pending_release(PendingWithoutUnknownAcquire());
  if (absl::Now() >= deadline()) return AcquireResult(std::optional<RemoteHold>());
  return LookAfterRefusal(session, &attempt);
}

std::optional<AcquireResult> KeyAcquisition::LookAfterRefusal(const std::string& session,
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

}  // namespace registry::lock
