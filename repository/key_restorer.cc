// SPDX-License-Identifier: Apache-2.0
// repository/key_restorer.cc
#include "repository/key_restorer.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "base/log.h"
#include "repository/session_metrics.h"

namespace registry {
namespace {

// How many lost sessions a claim of an exclusive key accepts as this instance's own.
constexpr size_t kLostSessionsRemembered = 8;

}  // namespace

KeyRestorer::KeyRestorer(consul::Client& client, consul::Canceller& canceller,
                         const SessionKeeperOptions& options, RememberedKeys& keys,
                         SessionCalls& calls, Callbacks callbacks)
    : client_(client),
      canceller_(canceller),
      options_(options),
      keys_(keys),
      calls_(calls),
      callbacks_(std::move(callbacks)) {}

KeyRestorer::~KeyRestorer() { Stop(); }

void KeyRestorer::SessionCreated(const std::string& session) {
  absl::MutexLock lock(&mu_);
  session_ = session;
  signal_.Notify();  // both destroying and binding wait for a live session
}

void KeyRestorer::SessionLost(const std::string& session, bool maybe_alive) {
  absl::MutexLock lock(&mu_);
  if (session_ == session) session_.clear();
  lost_sessions_.push_back(session);
  if (lost_sessions_.size() > kLostSessionsRemembered) lost_sessions_.pop_front();
  // The server may still have it (a partition, a slow election): destroy it so that it stops
  // holding keys and locks, once a new session is live.
  if (maybe_alive) doomed_.Add(session, MonotonicNow());
}

void KeyRestorer::NeedRestore() {
  absl::MutexLock lock(&mu_);
  pass_needed_ = true;
  next_pass_ = MonotonicNow();
  signal_.Notify();
  if (running_ || stopping_) return;
  // A finished thread has left its loop (it cleared running_ under mu_, which it does not take
  // again), so this join is immediate.
  if (thread_.joinable()) thread_.join();
  running_ = true;
  thread_ = std::thread([this] { Run(); });
}

std::vector<std::string> KeyRestorer::Stop() {
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  signal_.Notify();
  if (thread.joinable()) thread.join();
  absl::MutexLock lock(&mu_);
  return doomed_.TakeAll();
}

bool KeyRestorer::PassDueLocked() const {
  return !session_.empty() && pass_needed_ && MonotonicNow() >= next_pass_;
}

void KeyRestorer::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    // The lost session first: while it lives it holds the keys the pass would bind.
    if (DestroyDueSessionLocked()) continue;
    if (PassDueLocked()) {
      PassLocked();
      continue;
    }
    // Every key is back and no lost session is left: the thread ends until the next loss.
    if (!pass_needed_ && doomed_.empty()) break;
    const absl::Time due =
        session_.empty()
            ? absl::InfiniteFuture()
            : std::min(pass_needed_ ? next_pass_ : absl::InfiniteFuture(), doomed_.NextAttempt());
    const absl::Duration wait = due - MonotonicNow();
    mu_.Unlock();
    signal_.WaitFor(wait);  // on the steady clock; notified when work or a session arrives
    mu_.Lock();
  }
  running_ = false;
}

bool KeyRestorer::DestroyDueSessionLocked() {
  // Attempts wait for a live session: its create succeeding shows that the cluster answers
  // again, and until then an attempt would only fail.
  if (session_.empty()) return false;
  const std::optional<std::string> id = doomed_.DueAt(MonotonicNow());
  if (!id.has_value()) return false;
  mu_.Unlock();
  const absl::Status destroyed =
      calls_.Destroy(*id, &canceller_, std::min(options_.ttl, options_.request_timeout));
  mu_.Lock();
  if (destroyed.ok()) {
    doomed_.Destroyed(*id);
    Log(LogLevel::kInfo, "session", "lost session ", *id,
        " destroyed; its locks are free after the lock-delay");
  } else {
    doomed_.Failed(*id, MonotonicNow() + SessionRetryDelay(options_, bitgen_));
  }
  return true;
}

void KeyRestorer::PassLocked() {
  const std::string session = session_;
  const std::vector<std::pair<std::string, RememberedKeys::Key>> pending = keys_.Unbound(session);
  if (pending.empty()) {
    pass_needed_ = false;
    mu_.Unlock();
    callbacks_.restored(session);  // may call NeedRestore() again
    mu_.Lock();
    return;
  }
  SessionMetrics().session_restore_passes.Get().Increment();
  const absl::flat_hash_set<std::string> own_sessions(lost_sessions_.begin(), lost_sessions_.end());
  bool retry_later = false;
  bool stop = false;
  for (size_t next = 0; next < pending.size() && !stop;) {
    // Up to kMaxKeysPerBatch keys in one transaction (mu_ is released for the request; the write
    // order puts it after user writes, one batch at a time).
    std::vector<BindRequest> batch;
    for (; next < pending.size() && batch.size() < kMaxKeysPerBatch; ++next) {
      const auto& [consul_key, key] = pending[next];
      batch.push_back(BindRequest{consul_key, key.value, session, key.exclusive, own_sessions});
    }
    mu_.Unlock();
    {
      absl::WriterMutexLock write_lock(&keys_.write_order());
      Batch(std::move(batch), session, &retry_later, &stop);
    }
    mu_.Lock();
    if (stopping_ || session_ != session) return;
  }
  next_pass_ = MonotonicNow() + (retry_later ? options_.lock_retry : absl::ZeroDuration());
}

void KeyRestorer::Batch(std::vector<BindRequest> batch, const std::string& session,
                        bool* retry_later, bool* stop) {
  while (!batch.empty() && !*stop) {
    {
      // A user write since the pass began may have changed or dropped a key.
      absl::MutexLock lock(&mu_);
      if (stopping_ || session_ != session) return;
      std::erase_if(batch, [this, &session](BindRequest& request) {
        const std::optional<RememberedKeys::Key> key = keys_.Find(request.consul_key);
        if (!key.has_value()) return true;
        request.value = key->value;
        return key->bound_session == session;
      });
    }
    if (batch.empty()) return;
    absl::StatusOr<BatchBindOutcome> outcome = AttemptCreateBatch(client_, batch, &canceller_);
    if (!outcome.ok()) {  // unreachable, or stopping: the next pass tries again
      *retry_later = *stop = true;
      return;
    }
    if (outcome->outcome != BindOutcome::kExists) {
      for (const BindRequest& request : batch) {
        Record(request.consul_key, session, outcome->outcome, retry_later, stop);
      }
      return;
    }
    // Keys that exist (taken by another instance, or still held by the lost session): one by
    // one, reading each; then the rest of the batch again.
    std::vector<bool> done(batch.size(), false);
    for (size_t index : outcome->existing) {
      absl::StatusOr<BindOutcome> single = AttemptBind(client_, batch[index], &canceller_);
      if (!single.ok()) {
        *retry_later = *stop = true;
        return;
      }
      Record(batch[index].consul_key, session, *single, retry_later, stop);
      done[index] = true;
    }
    std::vector<BindRequest> rest;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!done[i]) rest.push_back(std::move(batch[i]));
    }
    batch = std::move(rest);
  }
}

void KeyRestorer::Record(const std::string& key, const std::string& session, BindOutcome outcome,
                         bool* retry_later, bool* stop) {
  switch (outcome) {
    case BindOutcome::kBound:
      keys_.MarkBound(key, session);
      SessionMetrics().session_keys_restored.Get().Increment();
      return;
    case BindOutcome::kExists:
      Log(LogLevel::kWarn, "session", "ephemeral key '", key, "' now belongs to another instance");
      keys_.Forget(key);
      return;
    case BindOutcome::kBadSession:
      // The keeper checks the session at once; the next session restarts the pass.
      callbacks_.session_invalid(session);
      *stop = true;
      return;
    case BindOutcome::kLockDelay:
    case BindOutcome::kChanged:
      *retry_later = true;
      *stop = true;  // the lost session's keys share their lock-delay: wait it out together
      return;
  }
}

}  // namespace registry
