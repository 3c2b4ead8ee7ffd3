// SPDX-License-Identifier: Apache-2.0
// lock/lock_core.cc
#include "lock/lock_core.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "base/monotonic.h"
#include "base/status_text.h"
#include "consul/txn.h"
#include "lock/consul_semaphore.h"
#include "lock/lock_name.h"

namespace registry::lock {
namespace {

// Lost session ids remembered (a loss is acted upon long before this many more happen).
constexpr size_t kLostSessionsKept = 16;

// OK iff `entry`, the state of lock key `consul_key`, is held by `session`; else Aborted saying
// what happened to it.
absl::Status HeldBy(absl::string_view consul_key, absl::string_view session,
                    const std::optional<consul::DirEntry>& entry) {
  if (!entry.has_value()) {
    return absl::AbortedError(absl::StrCat("lock key '", consul_key, "' was deleted"));
  }
  if (entry->session == session) return absl::OkStatus();
  if (entry->session.empty()) {
    return absl::AbortedError(absl::StrCat("lock key '", consul_key, "' was released"));
  }
  return absl::AbortedError(
      absl::StrCat("lock key '", consul_key, "' is now held by session ", entry->session));
}

// The instance sessions that have a live core: at most one core per session.
absl::Mutex registry_mu(absl::kConstInit);
absl::flat_hash_set<const InstanceSession*>& Registry() ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mu) {
  static auto* sessions = new absl::flat_hash_set<const InstanceSession*>();
  return *sessions;
}

}  // namespace

LockCore::LockCore(const LockManagerParts& parts, LockManagerOptions options)
    : session_(parts.session),
      client_(parts.client),
      watches_(parts.key_watches),
      tasks_(parts.tasks),
      options_(std::move(options)),
      key_space_(parts.key_space),
      max_unreachable_(options_.max_unreachable > absl::ZeroDuration() ? options_.max_unreachable
                                                                       : parts.session_ttl),
      block_query_wait_(parts.block_query_wait),
      lock_retry_(parts.lock_retry) {}

LockCore::~LockCore() { Shutdown(); }

absl::StatusOr<std::shared_ptr<LockCore>> LockCore::Create(const LockManagerParts& parts,
                                                           LockManagerOptions options) {
  {
    absl::MutexLock lock(&registry_mu);
    if (!Registry().insert(&parts.session).second) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a LockManager already exists for this repository instance (namespace '",
          parts.key_space.namespace_name(), "'): share it instead of creating another"));
    }
  }
  auto core = std::make_shared<LockCore>(parts, std::move(options));
  core->registered_ = true;
  LockCore* raw = core.get();
  core->observer_id_ = parts.session.AddSessionObserver(
      [raw](const InstanceSession::Event& event) { raw->OnSessionEvent(event); });
  core->repository_link_ = std::make_unique<consul::Canceller::Waker>(&parts.closing, [raw] {
    raw->CloseAll(absl::FailedPreconditionError("the repository is closed"));
  });
  if (core->repository_link_->cancelled()) {
    core->CloseAll(absl::FailedPreconditionError("the repository is closed"));
  }
  return core;
}

void LockCore::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  repository_link_.reset();  // from here on the link callback is neither running nor called
  CloseAll(absl::FailedPreconditionError("the lock manager was destroyed"));
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* calls) { return *calls == 0; }, &calls_));
  }
  if (observer_id_ != 0) session_.RemoveSessionObserver(observer_id_);
  {
    // The losses CloseAll() reported are delivered before the manager is gone, unless this is
    // itself a task (a lost or connection listener destroying the manager): tasks run one at a
    // time, so those queued behind it run after it, on their own.
    absl::MutexLock lock(&mu_);
    if (!tasks_.InTask()) {
      mu_.Await(absl::Condition(
          +[](int* deliveries) { return *deliveries == 0; }, &deliveries_));
    }
  }
  std::map<std::pair<LockKind, std::string>, std::shared_ptr<TwoTierLock>> locks;
  {
    absl::MutexLock lock(&mu_);
    locks.swap(locks_);  // breaks the core <-> lock cycle; callers may still hold their locks
  }
  locks.clear();
  if (registered_) {
    absl::MutexLock lock(&registry_mu);
    Registry().erase(&session_);
  }
}

bool LockCore::CloseAll(const absl::Status& reason) {
  std::vector<std::shared_ptr<TwoTierLock>> locks;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_.ok()) return false;
    closed_ = reason;
    for (const auto& [name, held] : locks_) locks.push_back(held);
  }
  canceller_.Cancel();  // in-flight requests of every lock return now
  for (const std::shared_ptr<TwoTierLock>& held : locks) held->Close(reason);
  return true;
}

std::shared_ptr<TwoTierLock> LockCore::NewLock(LockKind kind, const std::string& canonical,
                                               int limit) {
  const LockKindTraits& traits = TraitsOf(kind);
  int capacity = 1;
  if (traits.capacity == LockCapacity::kLimit) capacity = limit;
  if (traits.capacity == LockCapacity::kAny) capacity = std::numeric_limits<int>::max();
  return std::make_shared<TwoTierLock>(shared_from_this(), canonical, traits.noun, capacity,
                                       traits.new_remote(*this, canonical, limit), kind);
}

absl::StatusOr<std::shared_ptr<DistributedLock>> LockCore::GetLock(absl::string_view name,
                                                                   LockKind kind, int limit) {
  const LockKindTraits& traits = TraitsOf(kind);
  const bool takes_limit = traits.capacity == LockCapacity::kLimit;
  absl::StatusOr<std::string> canonical = CanonicalLockName(name);
  if (!canonical.ok()) return canonical.status();
  const std::string what = absl::StrCat(traits.getter, " '", *canonical, "'");
  if (takes_limit && (limit < 1 || limit > kMaxSemaphoreLimit)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": limit ", limit, " is not from 1 to ", kMaxSemaphoreLimit));
  }
  absl::MutexLock lock(&mu_);
  if (!closed_.ok()) return Prefixed(what, closed_);
  std::shared_ptr<TwoTierLock>& slot = locks_[{kind, *canonical}];
  if (slot == nullptr && traits.other_side != kind) {
    // Both sides at once, each knowing the other before either is handed out.
    std::shared_ptr<TwoTierLock>& other = locks_[{traits.other_side, *canonical}];
    slot = NewLock(kind, *canonical, limit);
    other = NewLock(traits.other_side, *canonical, limit);
    slot->set_other_side(other);
    other->set_other_side(slot);
  } else if (slot == nullptr) {
    slot = NewLock(kind, *canonical, limit);
  } else if (takes_limit && slot->capacity() != limit) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": this manager has it with limit ",
                                                      slot->capacity(), ", asked for ", limit));
  }
  return slot;
}

bool LockCore::BeginCall() {
  absl::MutexLock lock(&mu_);
  if (!closed_.ok()) return false;
  ++calls_;
  return true;
}

void LockCore::EndCall() {
  absl::MutexLock lock(&mu_);
  --calls_;
}

absl::Status LockCore::closed_status() {
  absl::MutexLock lock(&mu_);
  return closed_;
}

absl::StatusOr<std::string> LockCore::SessionForAttempt(absl::Time deadline,
                                                        absl::Time request_deadline) {
  // Two looks at the session: now, and (if it is being replaced) after waiting for a change.
  for (int look = 0; look < 2; ++look) {
    const std::string id = session_.CurrentSessionId();
    {
      absl::MutexLock lock(&mu_);
      if (!closed_.ok()) return closed_;
      const absl::Time now = absl::Now();
      const bool refused = !id.empty() && id == invalid_session_ && now < invalid_until_;
      if (!id.empty() && !refused) {
        had_session_ = true;
        return id;
      }
      if (!id.empty() || had_session_) {
        // Refused or lost: wait for the successor (or the refusal to age out), at most one
        // lock_retry and never past the deadline.
        if (look > 0 || now >= deadline) return std::string();
        struct Args {
          LockCore* core;
          uint64_t events;
        } args{this, session_events_};
        mu_.AwaitWithDeadline(absl::Condition(
                                  +[](Args* a) {
                                    return !a->core->closed_.ok() ||
                                           a->core->session_events_ != a->events;
                                  },
                                  &args),
                              std::min(deadline, refused ? invalid_until_ : now + lock_retry_));
        continue;
      }
    }
    // The instance never had a session: create it now (one request, then never again).
    absl::StatusOr<std::string> created = session_.AcquireSessionId(request_deadline);
    if (!created.ok()) return created.status();
    absl::MutexLock lock(&mu_);
    had_session_ = true;
    return created;
  }
  return std::string();
}

void LockCore::ReportSessionInvalid(const std::string& session_id) {
  session_.ReportSessionInvalid(session_id);
  absl::MutexLock lock(&mu_);
  invalid_session_ = session_id;
  invalid_until_ = absl::Now() + lock_retry_;
}

bool LockCore::IsSessionLost(const std::string& session_id) {
  absl::MutexLock lock(&mu_);
  return std::find(lost_sessions_.begin(), lost_sessions_.end(), session_id) !=
         lost_sessions_.end();
}

bool LockCore::SleepUntil(absl::Time until) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithDeadline(absl::Condition(
                            +[](absl::Status* closed) { return !closed->ok(); }, &closed_),
                        until);
  return closed_.ok();
}

uint64_t LockCore::NextHoldId() {
  absl::MutexLock lock(&mu_);
  return next_hold_id_++;
}

watch::WatchId LockCore::WatchHeldKey(const std::string& consul_key, const std::string& session,
                                      std::function<void(const absl::Status&)> on_lost) {
  if (options_.monitor_delay == absl::InfiniteDuration()) return 0;
  absl::StatusOr<watch::WatchId> id =
      watches_.WatchKey(consul_key,
                        [consul_key, session, on_lost = std::move(on_lost),
                         reported = false](const std::optional<consul::DirEntry>& entry) mutable {
                          absl::Status held = HeldBy(consul_key, session, entry);
                          if (held.ok() || reported) return;
                          reported = true;
                          on_lost(held);
                        },
                        {.start_at = MonotonicNow() + options_.monitor_delay});
  if (!id.ok()) {
    Log(LogLevel::kError, "lock", "key '", consul_key,
        "' is not monitored: ", id.status().message());
    return 0;
  }
  return *id;
}

void LockCore::StopWatching(watch::WatchId id) {
  if (id != 0) watches_.Remove(id);
}

void LockCore::Deliver(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    ++deliveries_;
  }
  // The task keeps the core alive: Shutdown() may return, and the manager go, while it runs.
  if (tasks_.Post([self = shared_from_this(), task = std::move(task)] {
        task();
        absl::MutexLock lock(&self->mu_);
        --self->deliveries_;
      })) {
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    --deliveries_;
  }
  Log(LogLevel::kError, "lock",
      "a task (lost listeners or a release) was dropped: the repository is closed");
}

void LockCore::OnSessionEvent(const InstanceSession::Event& event) {
  std::vector<std::shared_ptr<TwoTierLock>> locks;
  {
    absl::MutexLock lock(&mu_);
    ++session_events_;
    if (event.kind == InstanceSession::EventKind::kCreated) {
      had_session_ = true;
      return;
    }
    lost_sessions_.push_back(event.session_id);
    if (lost_sessions_.size() > kLostSessionsKept) lost_sessions_.pop_front();
    for (const auto& [name, held] : locks_) locks.push_back(held);
  }
  for (const std::shared_ptr<TwoTierLock>& held : locks) held->OnSessionLost(event.session_id);
}

absl::Status DeleteOwnEntry(LockCore& core, const std::string& entry) {
  const consul::TxnOp remove[] = {consul::TxnOp::Delete(entry)};
  return core.client().Txn(remove, core.canceller(), consul::Writers::kOnlyThisCaller).status();
}

}  // namespace registry::lock
