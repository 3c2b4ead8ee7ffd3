// SPDX-License-Identifier: Apache-2.0
// lock/acquire_loop.cc
#include "lock/acquire_loop.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/backoff.h"
#include "base/status_text.h"
#include "consul/errors.h"
#include "consul/query.h"
#include "consul/transport.h"

namespace registry::lock {
namespace {

constexpr absl::Duration kFirstBackoff = absl::Milliseconds(50);

}  // namespace

absl::Duration BlockingWait(absl::Duration remaining, absl::Duration configured) {
  if (remaining == absl::InfiniteDuration()) return configured;
  return std::min(configured, remaining * 16 / 17);
}

std::string NewEntryName(const std::string& session, absl::BitGen& gen) {
  return absl::StrCat(session, ".", absl::Hex(absl::Uniform<uint64_t>(gen), absl::kZeroPad16));
}

Unreachable::Unreachable(absl::Duration limit, absl::Duration max_backoff)
    : limit_(limit), max_backoff_(std::max(max_backoff, kFirstBackoff)) {}

void Unreachable::Success() {
  since_ = absl::InfiniteFuture();
  failures_ = 0;
}

absl::Status Unreachable::Failure(const absl::Status& error, absl::Time started) {
  const absl::Time now = absl::Now();
  if (failures_++ == 0) since_ = std::min(started, now);
  last_ = error;
  if (now - since_ < limit_) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(
      "Consul unreachable for ", absl::FormatDuration(now - since_), ": ", error.message()));
}

absl::Duration Unreachable::Backoff() {
  return BackoffDelay(kFirstBackoff, max_backoff_, failures_, gen_);
}

absl::Status ReleaseWithRetries(LockCore& core, absl::FunctionRef<absl::StatusOr<bool>()> attempt,
                                absl::FunctionRef<absl::Status(const absl::Status&)> prefixed) {
  Unreachable unreachable(core.max_unreachable(), core.lock_retry());
  for (;;) {
    const absl::Time attempt_started = absl::Now();
    absl::StatusOr<bool> done = attempt();
    if (done.ok()) {
      if (*done) return absl::OkStatus();
      continue;
    }
    const absl::Status& error = done.status();
    if (consul::IsInvalidSession(error) || absl::IsCancelled(error)) return absl::OkStatus();
    if (!consul::IsTransient(error)) return prefixed(error);
    if (absl::Status give_up = unreachable.Failure(error, attempt_started); !give_up.ok()) {
      return prefixed(give_up);
    }
    if (!core.SleepUntil(absl::Now() + unreachable.Backoff())) return absl::OkStatus();
  }
}

AcquireLoop::AcquireLoop(LockCore& core, const std::string& name, absl::Time deadline,
                         absl::Time request_deadline, absl::string_view op,
                         PendingRelease* pending_release, absl::string_view noun)
    : core_(core),
      name_(name),
      deadline_(deadline),
      request_deadline_(request_deadline),
      op_(op),
      pending_release_(pending_release),
      noun_(noun),
      call_(core.canceller(), request_deadline),
      unreachable_(core.max_unreachable(), core.lock_retry()) {}

AcquireResult AcquireLoop::Run() {
  for (;;) {
    const absl::Time now = absl::Now();
    started_ = now;
    std::optional<AcquireResult> result =
        attempted_ && now >= deadline_ ? GiveUpAtDeadline() : Round(now);
    if (!result.has_value()) continue;
    // Whatever the outcome, no failed attempt may leave Consul state bound to the instance
    // session: the caller releases what is pending unless the call holds.
    if (result->ok() && (*result)->has_value()) clear_pending_release();
    return *std::move(result);
  }
}

AcquireResult AcquireLoop::GiveUpAtDeadline() {
  if (!unreachable_.failing()) return std::optional<RemoteHold>();
  return Prefixed(absl::UnavailableError(absl::StrCat(
      "Consul could not be reached before the deadline: ", unreachable_.last().message())));
}

std::string AcquireLoop::SessionForAttempt(std::optional<AcquireResult>* round) {
  absl::StatusOr<std::string> live = core_.SessionForAttempt(deadline_, request_deadline_);
  // Asking for the session is part of the attempt: a call whose session cannot be created
  // (Consul down or hanging) has attempted, and gives up at its deadline like any other.
  attempted_ = true;
  if (!live.ok()) {
    *round = RetryAfter(live.status());
    return "";
  }
  if (live->empty()) {  // a lost session is still being replaced: Consul may be down
    *round = CountFailure(
        absl::UnavailableError("no live instance session (the lost one is being replaced)"));
  }
  return *std::move(live);
}

absl::Time AcquireLoop::AttemptDeadline(absl::Time now) const {
  return std::min(request_deadline_, unreachable_.GiveUpAt(now));
}

bool AcquireLoop::SessionRefused(const absl::StatusOr<consul::TxnResult>& result,
                                 const std::string& session) {
  const bool refused = result.ok() ? result->FailedWith(consul::TxnFailure::kInvalidSession)
                                   : consul::IsInvalidSession(result.status());
  if (refused) core_.ReportSessionInvalid(session);
  return refused;
}

std::optional<AcquireResult> AcquireLoop::AfterSessionRefused(const std::string& session) {
  return CountFailure(absl::FailedPreconditionError(
      absl::StrCat("Consul does not know the instance session ", session)));
}

consul::QueryOptions AcquireLoop::BlockingQuery(uint64_t index, absl::Time now) const {
  consul::QueryOptions query;
  query.index = index;
  query.wait = BlockingWait(deadline_ - now, core_.block_query_wait());
  return query;
}

absl::StatusOr<consul::KvGetResult> AcquireLoop::BlockingRead(const std::string& key,
                                                              uint64_t index, absl::Time now) {
  return core_.client().KvGet(key, BlockingQuery(index, now), &call_);
}

absl::StatusOr<consul::KvListResult> AcquireLoop::BlockingList(const std::string& prefix,
                                                               uint64_t index, absl::Time now) {
  return core_.client().KvList(prefix, BlockingQuery(index, now), &call_);
}

std::optional<AcquireResult> AcquireLoop::RetryAfter(const absl::Status& error) {
  if (absl::IsCancelled(error) || !core_.closed_status().ok()) return Closed();
  // Cut by the caller's deadline (within the transport's millisecond): the loop gives up
  // (false), Consul was not unreachable. A cut by the unreachable budget is a failure below.
  if (absl::IsDeadlineExceeded(error) && absl::Now() + absl::Milliseconds(1) >= request_deadline_) {
    attempted_ = true;
    return std::nullopt;
  }
  if (!consul::IsTransient(error)) return AcquireResult(Prefixed(error));
  if (std::optional<AcquireResult> give_up = CountFailure(error); give_up.has_value()) {
    return give_up;
  }
  return PauseUntil(absl::Now() + unreachable_.Backoff());
}

std::optional<AcquireResult> AcquireLoop::CountFailure(const absl::Status& error) {
  absl::Status give_up = unreachable_.Failure(error, started_);
  if (give_up.ok()) return std::nullopt;
  return AcquireResult(Prefixed(give_up));
}

std::optional<AcquireResult> AcquireLoop::PauseUntil(absl::Time until) {
  if (!core_.SleepUntil(std::min(deadline_, until))) return Closed();
  return std::nullopt;
}

AcquireResult AcquireLoop::Closed() { return Prefixed(core_.closed_status()); }

absl::Status AcquireLoop::Prefixed(const absl::Status& status) const {
  return registry::Prefixed(absl::StrCat(op_, ": ", noun_, " '", name_, "'"), status);
}

}  // namespace registry::lock
