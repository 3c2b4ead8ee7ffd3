// SPDX-License-Identifier: Apache-2.0
// lock/two_tier_lock.cc
#include "lock/two_tier_lock.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/monotonic.h"
#include "base/status_text.h"
#include "lock/lock_core.h"
#include "lock/lock_metrics.h"
#include "lock/remote_lock.h"

namespace registry::lock {
namespace {

// Ends a LockCore call when it goes out of scope.
class CallScope {
 public:
  explicit CallScope(LockCore& core) : core_(core) {}
  ~CallScope() { core_.EndCall(); }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  LockCore& core_;
};

// One acquisition that is not a re-entry, in the lock metrics: a waiter while it lives, its wait
// observed when it ends.
class WaitScope {
 public:
  explicit WaitScope(LockKind kind) : kind_(kind), started_(MonotonicNow()) {
    SeriesOf(&LockFamilies::lock_waiters, kind_).Add(1);
  }
  ~WaitScope() {
    SeriesOf(&LockFamilies::lock_waiters, kind_).Add(-1);
    SeriesOf(&LockFamilies::lock_wait_duration, kind_).Observe(MonotonicNow() - started_);
  }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

  // Counts a timed attempt that gave up; returns false, Acquire's answer then.
  bool TimedOut() {
    SeriesOf(&LockFamilies::lock_timeouts, kind_).Increment();
    return false;
  }
  void Acquired() {
    SeriesOf(&LockFamilies::lock_acquisitions, kind_).Increment();
    SeriesOf(&LockFamilies::locks_held, kind_).Add(1);
  }

 private:
  const LockKind kind_;
  const absl::Time started_;
};

}  // namespace

TwoTierLock::TwoTierLock(std::shared_ptr<LockCore> core, std::string name, absl::string_view noun,
                         int capacity, std::unique_ptr<RemoteLock> remote, LockKind kind)
    : core_(std::move(core)),
      name_(std::move(name)),
      noun_(noun),
      what_(absl::StrCat(noun, " '", name_, "'")),
      capacity_(capacity),
      kind_(kind),
      remote_(std::move(remote)) {}

TwoTierLock::~TwoTierLock() = default;

const std::string& TwoTierLock::consul_key() const { return remote_->consul_key(); }

absl::Status TwoTierLock::Prefixed(absl::string_view op, const absl::Status& status) const {
  return registry::Prefixed(absl::StrCat(op, ": ", what_), status);
}

const TwoTierLock::Hold* TwoTierLock::HeldBy(std::thread::id thread) const {
  auto it = holds_.find(thread);
  return it != holds_.end() && it->second.count > 0 ? &it->second : nullptr;
}

TwoTierLock::Hold* TwoTierLock::HeldBy(std::thread::id thread) {
  return const_cast<Hold*>(std::as_const(*this).HeldBy(thread));
}

TwoTierLock::Hold* TwoTierLock::HoldWithId(uint64_t id) {
  for (auto& [thread, hold] : holds_) {
    if (hold.id == id && hold.count > 0) return &hold;
  }
  return nullptr;
}

absl::Status TwoTierLock::Lock() {
  absl::StatusOr<bool> acquired = Acquire(absl::InfiniteFuture(), absl::InfiniteFuture(), "Lock");
  if (!acquired.ok()) return acquired.status();
  if (!*acquired) return absl::InternalError(absl::StrCat("Lock: ", what_, ": gave up"));
  return absl::OkStatus();
}

absl::StatusOr<bool> TwoTierLock::TryLock(absl::Duration timeout) {
  const absl::Time now = absl::Now();
  // A single attempt: it does not wait for the lock, and its requests (the session's creation
  // among them) end within one request timeout, however long Consul takes to answer.
  if (timeout <= absl::ZeroDuration()) {
    return Acquire(now, now + core_->client().options().request_timeout, "TryLock");
  }
  return Acquire(now + timeout, now + timeout, "TryLock");
}

absl::StatusOr<bool> TwoTierLock::Acquire(absl::Time deadline, absl::Time request_deadline,
                                          absl::string_view op) {
  const std::thread::id me = std::this_thread::get_id();
  {
    absl::MutexLock lock(&mu_);
    if (Hold* held = HeldBy(me); held != nullptr) {
      if (!held->lost.ok()) {
        return absl::AbortedError(absl::StrCat(op, ": ", what_,
                                               " was lost while held by this thread (",
                                               held->lost.message(), "); unlock it first"));
      }
      ++held->count;  // re-entry: no request
      return true;
    }
    if (!closed_.ok()) return Prefixed(op, closed_);
  }
  if (std::shared_ptr<TwoTierLock> other = other_side_.lock();
      other != nullptr && other->IsHeldByCurrentThread()) {
    return absl::FailedPreconditionError(
        absl::StrCat(op, ": ", what_, ": this thread holds the ", other->noun_,
                     "; taking both sides would wait for itself (unlock it first)"));
  }
  if (!core_->BeginCall()) return Prefixed(op, core_->closed_status());
  CallScope call(*core_);
  WaitScope wait(kind_);

  // Tier 1: wait for this thread's turn (FIFO by ticket) and for a free slot.
  {
    absl::MutexLock lock(&mu_);
    struct Turn {
      TwoTierLock* self;
      uint64_t ticket;
    } turn{this, next_ticket_++};
    waiting_.insert(turn.ticket);
    const absl::Condition ready(
        +[](Turn* t) {
          TwoTierLock& self = *t->self;
          const size_t taken = self.holds_.size() + self.releasing_unknown_;
          return !self.closed_.ok() || (taken < static_cast<size_t>(self.capacity_) &&
                                        *self.waiting_.begin() == t->ticket);
        },
        &turn);
    bool my_turn = true;
    if (deadline == absl::InfiniteFuture()) {
      mu_.Await(ready);
    } else {
      my_turn = mu_.AwaitWithDeadline(ready, deadline);
    }
    waiting_.erase(turn.ticket);
    if (!closed_.ok()) return Prefixed(op, closed_);
    if (!my_turn) return wait.TimedOut();
    holds_[me] = Hold();  // the slot, count 0 while acquiring
  }

  // Tier 2: only the threads holding a slot talk to Consul for this lock.
  PendingRelease pending;
  absl::StatusOr<std::optional<RemoteHold>> remote =
      remote_->Acquire(deadline, request_deadline, op, &pending);
  const uint64_t id = remote.ok() && remote->has_value() ? core_->NextHoldId() : 0;
  {
    absl::MutexLock lock(&mu_);
    if (!remote.ok() || !remote->has_value() || !closed_.ok()) {
      holds_.erase(me);
      if (!pending.empty()) ReleaseInBackground(std::move(pending));
      if (!remote.ok()) return remote.status();
      if (!closed_.ok()) return Prefixed(op, closed_);  // its session goes with the repository
      return wait.TimedOut();
    }
    Hold& hold = holds_[me];
    hold.count = 1;
    hold.remote = **remote;
    hold.id = id;
    latest_hold_ = id;
    latest_lost_ = absl::OkStatus();
    wait.Acquired();
  }
  const std::string& session = (*remote)->session;
  WatchHeldKey(id, **remote);
  // The session may have been lost while the acquire was in flight, before this hold existed
  // for the session observer to see.
  if (core_->IsSessionLost(session)) {
    MarkLost(id, absl::AbortedError(absl::StrCat("the instance session ", session, " was lost")));
  }
  return true;
}

void TwoTierLock::WatchHeldKey(uint64_t hold, const RemoteHold& remote) {
  std::weak_ptr<TwoTierLock> weak = weak_from_this();
  const watch::WatchId id =
      core_->WatchHeldKey(remote.key, remote.session, [weak, hold](const absl::Status& reason) {
        if (auto self = weak.lock()) self->MarkLost(hold, reason);
      });
  {
    absl::MutexLock lock(&mu_);
    // Closed meanwhile: Close() found no key watch to end.
    if (Hold* held = HoldWithId(hold); closed_.ok() && held != nullptr) {
      held->key_watch = id;
      return;
    }
  }
  core_->StopWatching(id);
}

void TwoTierLock::ReleaseInBackground(PendingRelease pending) {
  ++releasing_unknown_;
  std::weak_ptr<TwoTierLock> weak = weak_from_this();
  core_->Deliver([weak, pending = std::move(pending)] {
    auto self = weak.lock();
    if (self == nullptr) return;
    self->remote_->ReleasePending(pending);
    absl::MutexLock lock(&self->mu_);
    --self->releasing_unknown_;
  });
}

absl::Status TwoTierLock::Unlock() {
  const std::thread::id me = std::this_thread::get_id();
  RemoteHold remote;
  watch::WatchId key_watch = 0;
  bool lost = false;
  {
    absl::MutexLock lock(&mu_);
    Hold* held = HeldBy(me);
    if (held == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("Unlock: ", what_, " is not held by this thread"));
    }
    if (--held->count > 0) return absl::OkStatus();
    remote = held->remote;
    lost = !held->lost.ok();
    if (!lost) SeriesOf(&LockFamilies::locks_held, kind_).Add(-1);
    key_watch = std::exchange(held->key_watch, 0);
  }
  core_->StopWatching(key_watch);
  absl::Status status;
  // A lost hold has nothing to release (but what the recipe keeps besides its fence key); after
  // close the session (or the manager) is gone.
  if (core_->BeginCall()) {
    CallScope call(*core_);
    if (lost) {
      remote_->ForgetLostHold(remote);
    } else {
      status = remote_->Release(remote);
    }
  }
  absl::MutexLock lock(&mu_);
  holds_.erase(me);  // tier 1 last: the next local waiter may go
  return status;
}

bool TwoTierLock::IsHeldByCurrentThread() const {
  absl::MutexLock lock(&mu_);
  return HeldBy(std::this_thread::get_id()) != nullptr;
}

int TwoTierLock::HoldCount() const {
  absl::MutexLock lock(&mu_);
  const Hold* held = HeldBy(std::this_thread::get_id());
  return held == nullptr ? 0 : held->count;
}

int TwoTierLock::QueueLength() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(waiting_.size());
}

absl::Status TwoTierLock::lost_reason() const {
  absl::MutexLock lock(&mu_);
  const Hold* held = HeldBy(std::this_thread::get_id());
  return held != nullptr ? held->lost : latest_lost_;
}

int TwoTierLock::AddLostListener(LostListener listener) {
  return listeners_.Add(std::move(listener));
}

void TwoTierLock::RemoveLostListener(int id) { listeners_.Remove(id); }

void TwoTierLock::MarkLost(uint64_t hold_id, absl::Status reason) {
  {
    absl::MutexLock lock(&mu_);
    Hold* held = HoldWithId(hold_id);
    if (held == nullptr || !held->lost.ok()) return;
    held->lost = reason;
    SeriesOf(&LockFamilies::locks_held, kind_).Add(-1);
    SeriesOf(&LockFamilies::lock_losses, kind_).Increment();
    if (latest_hold_ == hold_id) latest_lost_ = reason;
  }
  std::weak_ptr<TwoTierLock> weak = weak_from_this();
  core_->Deliver([weak, reason = std::move(reason)] {
    if (auto self = weak.lock()) self->NotifyLost(reason);
  });
}

void TwoTierLock::MarkAllLost(const std::vector<uint64_t>& ids, const absl::Status& reason) {
  for (uint64_t id : ids) MarkLost(id, reason);
}

void TwoTierLock::OnSessionLost(const std::string& session_id) {
  std::vector<uint64_t> ids;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [thread, hold] : holds_) {
      if (hold.count > 0 && hold.remote.session == session_id) ids.push_back(hold.id);
    }
  }
  MarkAllLost(ids,
              absl::AbortedError(absl::StrCat("the instance session ", session_id, " was lost")));
}

void TwoTierLock::Close(const absl::Status& reason) {
  std::vector<uint64_t> ids;
  std::vector<watch::WatchId> key_watches;
  {
    absl::MutexLock lock(&mu_);
    if (closed_.ok()) closed_ = reason;
    for (auto& [thread, hold] : holds_) {
      if (hold.count == 0) continue;
      ids.push_back(hold.id);
      key_watches.push_back(std::exchange(hold.key_watch, 0));
    }
  }
  for (watch::WatchId id : key_watches) core_->StopWatching(id);
  MarkAllLost(ids, absl::AbortedError(reason.message()));
}

void TwoTierLock::NotifyLost(const absl::Status& reason) { listeners_.Notify(name_, reason); }

}  // namespace registry::lock
