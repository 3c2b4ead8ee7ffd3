// SPDX-License-Identifier: Apache-2.0
// tests/plugin/memory_locks.cc
#include "tests/plugin/memory_locks.h"

#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace registry::plugin {

class MemoryLock final : public lock::DistributedLock {
 public:
  MemoryLock(std::string name, Repository& repository)
      : name_(std::move(name)), repository_(repository) {}
  ~MemoryLock() override { Close(); }

  const std::string& name() const override { return name_; }
  int capacity() const override { return 1; }

  absl::Status Lock() override { return Acquire(absl::InfiniteFuture()).status(); }

  absl::StatusOr<bool> TryLock(absl::Duration timeout) override {
    return Acquire(timeout <= absl::ZeroDuration() ? absl::InfinitePast() : absl::Now() + timeout);
  }

  absl::Status Unlock() override {
    absl::MutexLock lock(&mu_);
    if (!HeldLocked()) {
      return absl::FailedPreconditionError(
          absl::StrCat("lock '", name_, "' is not held by the calling thread"));
    }
    if (--holds_ == 0) owner_ = std::thread::id();
    return absl::OkStatus();
  }

  bool IsHeldByCurrentThread() const override {
    absl::MutexLock lock(&mu_);
    return HeldLocked();
  }

  int HoldCount() const override {
    absl::MutexLock lock(&mu_);
    return HeldLocked() ? holds_ : 0;
  }

  absl::Status lost_reason() const override {
    absl::MutexLock lock(&mu_);
    return lost_;
  }

  int AddLostListener(LostListener listener) override {
    absl::MutexLock lock(&mu_);
    const int id = next_listener_id_++;
    listeners_[id] = std::move(listener);
    return id;
  }

  void RemoveLostListener(int id) override {
    absl::MutexLock lock(&mu_);
    listeners_.erase(id);
    if (calling_thread_ == std::this_thread::get_id()) return;  // from inside its own call
    struct Waiting {
      MemoryLock* self;
      int id;
    } waiting{this, id};
    mu_.Await(absl::Condition(
        +[](Waiting* w) ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->self->calling_ != w->id; },
        &waiting));
  }

  // Marks the current hold lost (if any and not already) and calls the listeners on a thread.
  void MarkLost(const absl::Status& reason) {
    absl::MutexLock lock(&mu_);
    MarkLostLocked(reason);
  }

  // Fails waiters and later calls; a held lock is reported lost. Joins the listener threads.
  void Close() {
    std::vector<std::thread> notifiers;
    {
      absl::MutexLock lock(&mu_);
      if (!closed_) {
        closed_ = true;
        MarkLostLocked(absl::FailedPreconditionError("the repository is closed"));
      }
      notifiers.swap(notifiers_);
    }
    for (std::thread& t : notifiers) t.join();
  }

 private:
  absl::Status FencedPersist(absl::string_view key, absl::string_view value) override {
    if (absl::Status s = CheckFenced(key); !s.ok()) return s;
    return repository_.Persist(key, value);
  }

  absl::Status FencedDelete(absl::string_view key) override {
    if (absl::Status s = CheckFenced(key); !s.ok()) return s;
    return repository_.Delete(key);
  }

  bool HeldLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return holds_ > 0 && owner_ == std::this_thread::get_id();
  }

  absl::StatusOr<bool> Acquire(absl::Time deadline) {
    absl::MutexLock lock(&mu_);
    if (closed_) return Closed();
    if (HeldLocked()) {
      if (!lost_.ok()) {
        return absl::AbortedError(absl::StrCat("lock '", name_, "': re-entry into a lost hold"));
      }
      ++holds_;
      return true;
    }
    auto free = +[](MemoryLock* self)
                     ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->holds_ == 0 || self->closed_; };
    if (!mu_.AwaitWithDeadline(absl::Condition(free, this), deadline)) return false;
    if (closed_) return Closed();
    owner_ = std::this_thread::get_id();
    holds_ = 1;
    lost_ = absl::OkStatus();
    return true;
  }

  absl::Status CheckFenced(absl::string_view key) {
    absl::MutexLock lock(&mu_);
    if (closed_) return Closed();
    if (!HeldLocked()) {
      return absl::FailedPreconditionError(
          absl::StrCat("write of '", key, "' under lock '", name_, "': not held"));
    }
    if (!lost_.ok()) {
      return absl::AbortedError(
          absl::StrCat("write of '", key, "' under lock '", name_, "': the hold was lost"));
    }
    return absl::OkStatus();
  }

  absl::Status Closed() const {
    return absl::FailedPreconditionError(absl::StrCat("lock '", name_, "': repository closed"));
  }

  void MarkLostLocked(const absl::Status& reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (holds_ == 0 || !lost_.ok()) return;
    lost_ = reason;
    std::vector<int> ids;
    for (const auto& [id, listener] : listeners_) ids.push_back(id);
    notifiers_.emplace_back([this, ids, reason] { Notify(ids, reason); });
  }

  // Calls the listeners `ids` that are still registered, one at a time.
  void Notify(const std::vector<int>& ids, const absl::Status& reason) {
    absl::MutexLock serial(&notify_mu_);
    for (int id : ids) {
      LostListener listener;
      {
        absl::MutexLock lock(&mu_);
        auto it = listeners_.find(id);
        if (it == listeners_.end()) continue;
        listener = it->second;
        calling_ = id;
        calling_thread_ = std::this_thread::get_id();
      }
      listener(name_, reason);
      absl::MutexLock lock(&mu_);
      calling_ = 0;
      calling_thread_ = std::thread::id();
    }
  }

  const std::string name_;
  Repository& repository_;
  absl::Mutex notify_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one delivery at a time
  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::thread::id owner_ ABSL_GUARDED_BY(mu_);
  int holds_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status lost_ ABSL_GUARDED_BY(mu_);  // not OK: the current or last hold was lost, why
  std::map<int, LostListener> listeners_ ABSL_GUARDED_BY(mu_);
  int next_listener_id_ ABSL_GUARDED_BY(mu_) = 1;
  int calling_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread::id calling_thread_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> notifiers_ ABSL_GUARDED_BY(mu_);  // joined by Close()
};

MemoryLockProvider::MemoryLockProvider(Repository& repository, std::function<void()> on_destroy)
    : repository_(repository), on_destroy_(std::move(on_destroy)) {}

MemoryLockProvider::~MemoryLockProvider() {
  if (on_destroy_) on_destroy_();
  Close();
}

absl::StatusOr<std::shared_ptr<lock::DistributedLock>> MemoryLockProvider::GetLock(
    absl::string_view name) {
  absl::string_view canonical = absl::StartsWith(name, "/") ? name.substr(1) : name;
  if (canonical.empty() || absl::StrContains(canonical, "//") || absl::EndsWith(canonical, "/")) {
    return absl::InvalidArgumentError(absl::StrCat("lock name '", name, "' is not valid"));
  }
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("GetLock: the repository is closed");
  std::shared_ptr<MemoryLock>& entry = locks_[std::string(canonical)];
  if (entry == nullptr) entry = std::make_shared<MemoryLock>(std::string(canonical), repository_);
  return entry;
}

void MemoryLockProvider::LoseLock(const std::string& name) {
  std::shared_ptr<MemoryLock> lock;
  {
    absl::MutexLock hold(&mu_);
    auto it = locks_.find(name);
    if (it == locks_.end()) return;
    lock = it->second;
  }
  lock->MarkLost(absl::UnavailableError(absl::StrCat("session of lock '", name, "' expired")));
}

void MemoryLockProvider::Close() {
  std::map<std::string, std::shared_ptr<MemoryLock>> locks;
  {
    absl::MutexLock hold(&mu_);
    closed_ = true;
    locks = locks_;
  }
  for (auto& [name, lock] : locks) lock->Close();
}

}  // namespace registry::plugin
