// SPDX-License-Identifier: Apache-2.0
// tests/lock/fake_instance_session.h
//
// An InstanceSession for unit tests, with the other LockManagerParts a lock manager is built from:
// a Client over the given (mock) transport, a session id the test sets, observers the test fires
// synchronously, a canceller the test cancels to play a repository that closes, and a real
// executor and watch engine (which start no thread before they have work). Counts
// AcquireSessionId() calls and records ReportSessionInvalid().
#ifndef TESTS_LOCK_FAKE_INSTANCE_SESSION_H_
#define TESTS_LOCK_FAKE_INSTANCE_SESSION_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "consul/client.h"
#include "repository/consul_repository.h"
#include "repository/instance_session.h"
#include "repository/key_space.h"
#include "watch/dispatcher.h"
#include "watch/watch_engine.h"

namespace registry::lock::testing {

inline ConsulRepositoryOptions FakeRepositoryOptions() {
  ConsulRepositoryOptions options;
  options.client.servers = "127.0.0.1:8500";
  options.namespace_name = "ns";
  options.session_ttl = absl::Seconds(10);
  options.block_query_wait = absl::Seconds(2);
  options.lock_retry = absl::Milliseconds(50);
  return options;
}

class FakeInstanceSession : public InstanceSession {
 public:
  FakeInstanceSession(std::shared_ptr<consul::Transport> transport,
                      ConsulRepositoryOptions options = FakeRepositoryOptions())
      : options_(std::move(options)), space_(options_.namespace_name) {
    client_ = *consul::Client::Create(options_.client, std::move(transport));
    // It contacts no server unless a key watch starts (the tests that use this session turn key
    // monitoring off).
    engine_ = *watch::WatchEngine::Create(client_.get(), {}, &tasks_);
  }
  ~FakeInstanceSession() override {
    engine_->Close();
    tasks_.Stop();
  }

  // What LockManager::Create takes.
  LockManagerParts parts() {
    return LockManagerParts{*this,
                            *client_,
                            canceller_,
                            *engine_,
                            tasks_,
                            space_,
                            options_.session_ttl,
                            options_.block_query_wait,
                            options_.lock_retry};
  }

  absl::StatusOr<std::string> AcquireSessionId(absl::Time /*deadline*/) override {
    absl::MutexLock lock(&mu_);
    ++acquire_calls_;
    if (canceller_.IsCancelled()) return absl::FailedPreconditionError("the repository is closed");
    if (session_.empty()) session_ = "s1";
    return session_;
  }
  absl::Status PersistentWrite(absl::string_view /*consul_key*/, bool /*tree*/,
                               absl::FunctionRef<absl::Status()> write) override {
    return write();
  }
  std::string CurrentSessionId() override {
    absl::MutexLock lock(&mu_);
    return session_;
  }
  void ReportSessionInvalid(absl::string_view session_id) override {
    absl::MutexLock lock(&mu_);
    reported_invalid_.emplace_back(session_id);
  }
  int AddSessionObserver(Observer observer) override {
    absl::MutexLock lock(&mu_);
    observers_.emplace(next_id_, std::move(observer));
    return next_id_++;
  }
  void RemoveSessionObserver(int id) override {
    absl::MutexLock lock(&mu_);
    observers_.erase(id);
  }

  // --- Test controls ---
  void SetSession(std::string id) {
    absl::MutexLock lock(&mu_);
    session_ = std::move(id);
  }
  // Calls every observer with the event, on this thread.
  void Fire(EventKind kind, const std::string& id) {
    std::vector<Observer> observers;
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [observer_id, observer] : observers_) observers.push_back(observer);
    }
    for (const Observer& observer : observers) observer(Event{kind, id});
  }
  void Close() { canceller_.Cancel(); }
  int acquire_calls() {
    absl::MutexLock lock(&mu_);
    return acquire_calls_;
  }
  std::vector<std::string> reported_invalid() {
    absl::MutexLock lock(&mu_);
    return reported_invalid_;
  }
  size_t observer_count() {
    absl::MutexLock lock(&mu_);
    return observers_.size();
  }

 private:
  const ConsulRepositoryOptions options_;
  const KeySpace space_;
  std::unique_ptr<consul::Client> client_;
  consul::Canceller canceller_;
  watch::Dispatcher tasks_{watch::DispatcherOptions{}};
  std::unique_ptr<watch::WatchEngine> engine_;  // closed before tasks_ and client_ go
  absl::Mutex mu_;
  std::string session_ ABSL_GUARDED_BY(mu_);
  int acquire_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> reported_invalid_ ABSL_GUARDED_BY(mu_);
  std::map<int, Observer> observers_ ABSL_GUARDED_BY(mu_);
  int next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace registry::lock::testing

#endif  // TESTS_LOCK_FAKE_INSTANCE_SESSION_H_
