// SPDX-License-Identifier: Apache-2.0
// lock/acquire_loop.h
//
// What the Acquire of every tier-2 recipe shares (internal to lock/): one deadline for the call,
// requests cancelled with the manager and cut at the request deadline, the instance session for
// each attempt (waiting for the successor of one the server refused), transient failures retried
// with back-off for at most max_unreachable, blocking reads that never end past the deadline, and
// errors that name the call and the lock. A recipe derives from AcquireLoop and writes Round():
// one round of its requests.
//
// Thread safety: an AcquireLoop is one call's state, used by the calling thread only.
#ifndef LOCK_ACQUIRE_LOOP_H_
#define LOCK_ACQUIRE_LOOP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "consul/canceller.h"
#include "consul/kv.h"
#include "consul/txn.h"
#include "lock/lock_core.h"
#include "lock/remote_lock.h"

namespace registry::lock {

using AcquireResult = absl::StatusOr<std::optional<RemoteHold>>;

// The server-side wait of a blocking read that must end by a deadline `remaining` away: Consul
// answers up to wait/16 after the wait (jitter), so ask for 16/17 of the remaining time; the
// caller asks again with what is left. Without a deadline, the configured wait.
absl::Duration BlockingWait(absl::Duration remaining, absl::Duration configured);

// A new name for an entry of `session` (the fair lock's queue entries, a record lock's
// entries): "<session>.<16 random hex digits>". Never reused, so a late delete of one hold's
// entry cannot touch a later hold's.
std::string NewEntryName(const std::string& session, absl::BitGen& gen);

// How long requests have been failing in a row, with the back-off between attempts.
class Unreachable {
 public:
  Unreachable(absl::Duration limit, absl::Duration max_backoff);

  void Success();
  // Records `error` of a request made at `started` (the client retries a request within its
  // timeout, so failing began then). Returns Unavailable once requests have failed for longer
  // than the limit.
  absl::Status Failure(const absl::Status& error, absl::Time started);

  bool failing() const { return failures_ > 0; }
  // When a request made at `now` must end for the limit to hold.
  absl::Time GiveUpAt(absl::Time now) const { return (failing() ? since_ : now) + limit_; }
  const absl::Status& last() const { return last_; }
  absl::Duration Backoff();

 private:
  const absl::Duration limit_;
  const absl::Duration max_backoff_;
  absl::Time since_ = absl::InfiniteFuture();
  int failures_ = 0;
  absl::Status last_;
  absl::BitGen gen_;
};

// Runs `attempt` (one release request; false: send it again at once) until it is done or fails
// for good. OK when done, when Consul no longer knows the session (its keys went with it), or
// when the manager closes (the repository destroys the session). Transient failures are retried
// with back-off for at most max_unreachable, then Unavailable. Errors go through `prefixed`.
absl::Status ReleaseWithRetries(LockCore& core, absl::FunctionRef<absl::StatusOr<bool>()> attempt,
                                absl::FunctionRef<absl::Status(const absl::Status&)> prefixed);

class AcquireLoop {
 public:
  // One Acquire of the lock called `name` (see RemoteLock::Acquire for the arguments); `noun`
  // says what it is in errors.
  AcquireLoop(LockCore& core, const std::string& name, absl::Time deadline,
              absl::Time request_deadline, absl::string_view op, PendingRelease* pending_release,
              absl::string_view noun = "lock");
  virtual ~AcquireLoop() = default;
  AcquireLoop(const AcquireLoop&) = delete;
  AcquireLoop& operator=(const AcquireLoop&) = delete;

  // Runs rounds until one gives a result, or the deadline passes after an attempt.
  AcquireResult Run();

 protected:
  // One round of requests, begun at `now`: the call's result, or nullopt to go round again.
  virtual std::optional<AcquireResult> Round(absl::Time now) = 0;

  // The instance session for an attempt (which then counts as made); "" when there is none,
  // with `*round` set to the round's result (nullopt: go round again).
  std::string SessionForAttempt(std::optional<AcquireResult>* round);
  // The deadline of the requests of an attempt made at `now`: the client retries a failing
  // request within its timeout, so no request may outlast what is left of the time granted to
  // an unreachable Consul. (A blocking read is not retried by the client and may block longer.)
  absl::Time AttemptDeadline(absl::Time now) const;
  // True if a txn's outcome says that Consul does not know `session`; it is then reported to
  // the session keeper, so that the next attempt waits for its successor.
  bool SessionRefused(const absl::StatusOr<consul::TxnResult>& result, const std::string& session);
  // The round's result after SessionRefused.
  std::optional<AcquireResult> AfterSessionRefused(const std::string& session);
  // A blocking read of `key` from `index`, ending by the deadline (BlockingWait).
  absl::StatusOr<consul::KvGetResult> BlockingRead(const std::string& key, uint64_t index,
                                                   absl::Time now);
  // The same for the tree under `prefix` (a blocking `?recurse`).
  absl::StatusOr<consul::KvListResult> BlockingList(const std::string& prefix, uint64_t index,
                                                    absl::Time now);

  // After a failed request: nullopt to go round again (after a back-off), or the result to give
  // up with.
  std::optional<AcquireResult> RetryAfter(const absl::Status& error);
  // Counts `error` against max_unreachable: the result to give up with once it is spent.
  std::optional<AcquireResult> CountFailure(const absl::Status& error);
  // A request succeeded: Consul is reachable.
  void Reached() { unreachable_.Success(); }
  // Waits until `until` (never past the deadline); the closed result if the manager closed.
  std::optional<AcquireResult> PauseUntil(absl::Time until);
  AcquireResult Closed();
  absl::Status Prefixed(const absl::Status& status) const;

  // What the caller must release if the call ends without a hold (RemoteLock::Acquire).
  void set_pending_release(PendingRelease what) { *pending_release_ = std::move(what); }
  void clear_pending_release() { *pending_release_ = PendingRelease(); }

  LockCore& core() { return core_; }
  // Every request of the call goes through this canceller, or a child of it.
  consul::Canceller* call() { return &call_; }
  absl::Time deadline() const { return deadline_; }

 private:
  AcquireResult GiveUpAtDeadline();
  // The query of a blocking read from `index` begun at `now`, ending by the deadline.
  consul::QueryOptions BlockingQuery(uint64_t index, absl::Time now) const;

  LockCore& core_;
  const std::string& name_;
  const absl::Time deadline_;
  const absl::Time request_deadline_;
  const absl::string_view op_;
  PendingRelease* const pending_release_;
  const absl::string_view noun_;
  // Cancelled with the manager, cut at request_deadline.
  consul::Canceller call_;
  Unreachable unreachable_;
  absl::Time started_;      // when the current round began
  bool attempted_ = false;  // an attempt was made (or cut by the caller's deadline)
};

}  // namespace registry::lock

#endif  // LOCK_ACQUIRE_LOOP_H_
