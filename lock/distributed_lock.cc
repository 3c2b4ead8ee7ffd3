// lock/distributed_lock.cc
//
// DistributedLock: tier 1 (the process-local FIFO lock), hold bookkeeping, loss and listeners,
// over a tier 2 (remote_lock.h). Fenced writes are in fenced_write.cc.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/monotonic.h"
#include "base/status_text.h"
#include "lock/lock_core.h"
#include "lock/lock_manager.h"
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

}  // namespace

DistributedLock::DistributedLock(std::shared_ptr<LockCore> core, std::string name,
                                 std::unique_ptr<RemoteLock> remote)
    : core_(std::move(core)), name_(std::move(name)), remote_(std::move(remote)) {}

DistributedLock::~DistributedLock() = default;

const std::string& DistributedLock::consul_key() const { return remote_->consul_key(); }

absl::Status DistributedLock::Prefixed(absl::string_view op, const absl::Status& status) const {
  return registry::Prefixed(absl::StrCat(op, ": lock '", name_, "'"), status);
}

absl::Status DistributedLock::Lock() {
  absl::StatusOr<bool> acquired = Acquire(absl::InfiniteFuture(), absl::InfiniteFuture(), "Lock");
  if (!acquired.ok()) return acquired.status();
  if (!*acquired) return absl::InternalError(absl::StrCat("Lock: lock '", name_, "': gave up"));
  return absl::OkStatus();
}

absl::StatusOr<bool> DistributedLock::TryLock(absl::Duration timeout) {
  const absl::Time now = absl::Now();
  if (timeout <= absl::ZeroDuration()) return Acquire(now, absl::InfiniteFuture(), "TryLock");
  return Acquire(now + timeout, now + timeout, "TryLock");
}

absl::StatusOr<bool> DistributedLock::Acquire(absl::Time deadline, absl::Time request_deadline,
                                              absl::string_view op) {
  const std::thread::id me = std::this_thread::get_id();
  {
    absl::MutexLock lock(&mu_);
    if (owner_ == me && holds_ > 0) {
      if (!lost_.ok()) {
        return absl::AbortedError(absl::StrCat(op, ": lock '", name_,
                                               "' was lost while held by this thread (",
                                               lost_.message(), "); unlock it first"));
      }
      ++holds_;  // re-entry: no request
      return true;
    }
    if (!closed_.ok()) return Prefixed(op, closed_);
  }
  if (!core_->BeginCall()) return Prefixed(op, core_->closed_status());
  CallScope call(*core_);

  // Tier 1: wait for this thread's turn (FIFO by ticket) and for the lock to be free.
  {
    absl::MutexLock lock(&mu_);
    struct Turn {
      DistributedLock* self;
      uint64_t ticket;
    } turn{this, next_ticket_++};
    waiting_.insert(turn.ticket);
    const absl::Condition ready(
        +[](Turn* t) {
          DistributedLock& self = *t->self;
          return !self.closed_.ok() ||
                 (self.owner_ == std::thread::id() && !self.releasing_unknown_ &&
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
    if (!my_turn) return false;
    owner_ = me;
  }

  // Tier 2: only this thread talks to Consul for this lock until it gives tier 1 back.
  std::string pending;
  absl::StatusOr<std::optional<RemoteHold>> remote =
      remote_->Acquire(deadline, request_deadline, op, &pending);
  const uint64_t hold = remote.ok() && remote->has_value() ? core_->NextHoldId() : 0;
  {
    absl::MutexLock lock(&mu_);
    if (!remote.ok() || !remote->has_value() || !closed_.ok()) {
      owner_ = std::thread::id();
      if (!pending.empty()) ReleaseInBackground(std::move(pending));
      if (!remote.ok()) return remote.status();
      if (!closed_.ok()) return Prefixed(op, closed_);  // its session goes with the repository
      return false;
    }
    holds_ = 1;
    held_ = **remote;
    hold_id_ = hold;
    lost_ = absl::OkStatus();
  }
  const std::string& session = (*remote)->session;
  WatchHeldKey(hold, **remote);
  // The session may have been lost while the acquire was in flight, before this hold existed
  // for the session observer to see.
  if (core_->IsSessionLost(session)) {
    MarkLost(hold, absl::AbortedError(absl::StrCat("the instance session ", session, " was lost")));
  }
  return true;
}

void DistributedLock::WatchHeldKey(uint64_t hold, const RemoteHold& remote) {
  std::weak_ptr<DistributedLock> weak = weak_from_this();
  const watch::WatchId id =
      core_->WatchHeldKey(remote.key, remote.session, [weak, hold](const absl::Status& reason) {
        if (auto self = weak.lock()) self->MarkLost(hold, reason);
      });
  {
    absl::MutexLock lock(&mu_);
    // Closed meanwhile: Close() found no key watch to end.
    if (closed_.ok() && hold_id_ == hold && holds_ > 0) {
      key_watch_ = id;
      return;
    }
  }
  core_->StopWatching(id);
}

void DistributedLock::ReleaseInBackground(std::string pending) {
  releasing_unknown_ = true;
  std::weak_ptr<DistributedLock> weak = weak_from_this();
  core_->Deliver([weak, pending = std::move(pending)] {
    auto self = weak.lock();
    if (self == nullptr) return;
    self->remote_->ReleasePending(pending);
    absl::MutexLock lock(&self->mu_);
    self->releasing_unknown_ = false;
  });
}

absl::Status DistributedLock::Unlock() {
  const std::thread::id me = std::this_thread::get_id();
  RemoteHold remote;
  watch::WatchId key_watch = 0;
  bool lost = false;
  {
    absl::MutexLock lock(&mu_);
    if (owner_ != me || holds_ == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("Unlock: lock '", name_, "' is not held by this thread"));
    }
    if (--holds_ > 0) return absl::OkStatus();
    remote = held_;
    lost = !lost_.ok();
    key_watch = std::exchange(key_watch_, 0);
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
  owner_ = std::thread::id();  // tier 1 last: the next local waiter may go
  held_ = RemoteHold();
  return status;
}

bool DistributedLock::IsHeldByCurrentThread() const {
  absl::MutexLock lock(&mu_);
  return owner_ == std::this_thread::get_id() && holds_ > 0;
}

int DistributedLock::HoldCount() const {
  absl::MutexLock lock(&mu_);
  return owner_ == std::this_thread::get_id() ? holds_ : 0;
}

int DistributedLock::QueueLength() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(waiting_.size());
}

bool DistributedLock::lost() const {
  absl::MutexLock lock(&mu_);
  return !lost_.ok();
}

absl::Status DistributedLock::lost_reason() const {
  absl::MutexLock lock(&mu_);
  return lost_;
}

int DistributedLock::AddLostListener(LostListener listener) {
  return listeners_.Add(std::move(listener));
}

void DistributedLock::RemoveLostListener(int id) { listeners_.Remove(id); }

void DistributedLock::MarkLost(uint64_t hold_id, absl::Status reason) {
  {
    absl::MutexLock lock(&mu_);
    if (hold_id != hold_id_ || holds_ == 0 || !lost_.ok()) return;
    lost_ = reason;
  }
  std::weak_ptr<DistributedLock> weak = weak_from_this();
  core_->Deliver([weak, reason = std::move(reason)] {
    if (auto self = weak.lock()) self->NotifyLost(reason);
  });
}

void DistributedLock::OnSessionLost(const std::string& session_id) {
  uint64_t hold = 0;
  {
    absl::MutexLock lock(&mu_);
    if (holds_ == 0 || held_.session != session_id) return;
    hold = hold_id_;
  }
  MarkLost(hold,
           absl::AbortedError(absl::StrCat("the instance session ", session_id, " was lost")));
}

void DistributedLock::Close(const absl::Status& reason) {
  uint64_t hold = 0;
  watch::WatchId key_watch = 0;
  {
    absl::MutexLock lock(&mu_);
    if (closed_.ok()) closed_ = reason;
    if (holds_ > 0) hold = hold_id_;
    key_watch = std::exchange(key_watch_, 0);
  }
  core_->StopWatching(key_watch);
  if (hold != 0) MarkLost(hold, absl::AbortedError(reason.message()));
}

void DistributedLock::NotifyLost(const absl::Status& reason) { listeners_.Notify(name_, reason); }

}  // namespace registry::lock
