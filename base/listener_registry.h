// SPDX-License-Identifier: Apache-2.0
// base/listener_registry.h
//
// ListenerRegistry<Args...> is the one implementation of "listeners that may be removed at any
// time, even from inside their own call":
//
//   ListenerRegistry<ConnectionState> listeners("connection listener");
//   int id = listeners.Add([](ConnectionState state) { ... });
//   listeners.Notify(ConnectionState::kLost);  // on the thread that delivers events
//   listeners.Remove(id);  // the listener is not running and is never called again
//
// Notify() calls every listener still registered when it reaches it, in the order they were
// added, one at a time and with no lock held. Remove() returns once the listener is not running,
// except when it is called from inside a Notify() of the same registry on the same thread (a
// listener removing itself or another one): waiting would deadlock, so it returns at once and the
// running call completes.
//
// An exception thrown by a listener stops at CallContainingExceptions(): it is logged to stderr
// (base/log.h) with the registry's label, and the other listeners are still called. Listeners run
// on the plugin's background threads, where an escaping exception would end the host process.
//
// Thread safety: all methods may be called from any thread. Notify() calls are serialized, so no
// two listeners of one registry ever run at the same time. A listener must not call Notify() of
// its own registry.
#ifndef BASE_LISTENER_REGISTRY_H_
#define BASE_LISTENER_REGISTRY_H_

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/log.h"

namespace registry {

// Runs `call`. An exception it throws is logged as "<describe()> threw: <what>" and goes no
// further; `describe` (returning std::string) runs only then.
template <typename Call, typename Describe>
void CallContainingExceptions(Call&& call, Describe&& describe) noexcept {
  const char* what = nullptr;
  std::string text;
  try {
    call();
    return;
  } catch (const std::exception& e) {
    try {
      text = e.what();
    } catch (...) {
    }
    what = text.c_str();
  } catch (...) {
    what = "a non-standard exception";
  }
  try {
    Log(LogLevel::kError, "listener", describe(), " threw: ", what);
  } catch (...) {
    Log(LogLevel::kError, "listener", "a listener threw: ", what);
  }
}

template <typename... Args>
class ListenerRegistry {
 public:
  using Listener = std::function<void(Args...)>;

  // `label` names a listener of this registry in logs ("connection listener").
  explicit ListenerRegistry(std::string label) : label_(std::move(label)) {}
  ListenerRegistry(const ListenerRegistry&) = delete;
  ListenerRegistry& operator=(const ListenerRegistry&) = delete;

  // Registers `listener` (an empty one is kept but never called); returns its id, never 0.
  int Add(Listener listener) {
    absl::MutexLock lock(&mu_);
    const int id = next_id_++;
    listeners_.emplace(id, std::make_shared<const Listener>(std::move(listener)));
    return id;
  }

  // Unregisters `id` (unknown ids are ignored) and waits until it is not running, unless called
  // from a listener of this registry (see the file comment).
  void Remove(int id) {
    absl::MutexLock lock(&mu_);
    listeners_.erase(id);
    if (notifying_thread_ == std::this_thread::get_id()) return;
    auto not_running = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calling_ != id; };
    mu_.Await(absl::Condition(&not_running));
  }

  // Calls the listeners with `args`, one after the other.
  void Notify(const Args&... args) {
    absl::MutexLock serial(&notify_mu_);
    std::vector<int> ids;
    {
      absl::MutexLock lock(&mu_);
      notifying_thread_ = std::this_thread::get_id();
      for (const auto& entry : listeners_) ids.push_back(entry.first);
    }
    for (int id : ids) {
      std::shared_ptr<const Listener> listener;
      {
        absl::MutexLock lock(&mu_);
        auto it = listeners_.find(id);
        if (it == listeners_.end()) continue;  // removed by an earlier listener
        listener = it->second;
        calling_ = id;
      }
      if (*listener) {
        CallContainingExceptions([&] { (*listener)(args...); },
                                 [&] { return label_ + " " + std::to_string(id); });
      }
      absl::MutexLock lock(&mu_);
      calling_ = 0;
    }
    absl::MutexLock lock(&mu_);
    notifying_thread_ = std::thread::id();
  }

  bool empty() const {
    absl::MutexLock lock(&mu_);
    return listeners_.empty();
  }

 private:
  const std::string label_;
  absl::Mutex notify_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serializes Notify()
  mutable absl::Mutex mu_;
  std::map<int, std::shared_ptr<const Listener>> listeners_ ABSL_GUARDED_BY(mu_);
  int next_id_ ABSL_GUARDED_BY(mu_) = 1;
  int calling_ ABSL_GUARDED_BY(mu_) = 0;                   // the listener running now, 0 if none
  std::thread::id notifying_thread_ ABSL_GUARDED_BY(mu_);  // the thread inside Notify()
};

}  // namespace registry

#endif  // BASE_LISTENER_REGISTRY_H_
