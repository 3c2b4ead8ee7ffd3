// SPDX-License-Identifier: Apache-2.0
// host/plugin_handles.h
//
// RAII handles of the registry plugin C ABI for C++ hosts, used through host/plugin_client.h
// (include that one): TakeStatus (C error -> absl::Status), PluginWatch (one watch, removed on
// destruction) and PluginLock (one named lock, released on destruction). Compiled into the
// loader library (plugin_handles.cc).
//
// Thread safety: a PluginWatch is used by one thread at a time. PluginLock methods may be called
// concurrently (the lock itself is per thread: see Lock()); destruction must not race with them.
#ifndef REGISTRY_HOST_PLUGIN_HANDLES_H_
#define REGISTRY_HOST_PLUGIN_HANDLES_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/listener_registry.h"
#include "plugin/registry_plugin.h"
#include "registry/events.h"

namespace registry::plugin {

class PluginLibrary;

// The absl::StatusCode of a C code (they share values); kUnknown for a code outside them.
absl::StatusCode StatusCodeFromC(int code);

// Turns a C return code and its error into a Status, releasing the error.
absl::Status TakeStatus(const RegistryPluginApi& api, int code, RegistryError* error);

namespace internal {

// A host callback handed to the plugin as user data. The plugin stops calling it when its
// removal returns, except for a call in progress on the removing thread itself (removal from
// inside the callback): Retire() then leaves the freeing to that call.
template <typename Fn>
struct CallbackSlot {
  explicit CallbackSlot(Fn fn) : fn(std::move(fn)) {}

  // Runs `call(fn)` marked as in progress on this thread; frees the slot afterwards if it was
  // retired meanwhile. Exceptions stop here, logged (base/listener_registry.h): the C ABI has no
  // channel for them.
  template <typename Call>
  static void Run(void* user_data, Call&& call) noexcept {
    auto* slot = static_cast<CallbackSlot*>(user_data);
    slot->caller.store(std::this_thread::get_id());
    CallContainingExceptions([&] { call(slot->fn); },
                             [] { return std::string("a listener of the plugin wrapper"); });
    slot->caller.store(std::thread::id());
    if (slot->retired) delete slot;  // only the removing thread, from inside this call, sets it
  }

  // Frees the slot once the plugin no longer calls it: now, or after the current call when
  // that call is on this thread. Call only after the plugin's removal (or destroy) returned.
  static void Retire(CallbackSlot* slot) {
    if (slot == nullptr) return;
    if (slot->caller.load() == std::this_thread::get_id()) {
      slot->retired = true;
    } else {
      delete slot;
    }
  }

  Fn fn;
  std::atomic<std::thread::id> caller{};
  bool retired = false;
};

// Takes the slot registered as `id` out of `slots` (guarded by `mu`) and retires it; nothing if
// there is none. Call after the plugin's removal of `id` returned.
template <typename Slot>
void RetireSlot(absl::Mutex& mu, std::map<int64_t, Slot*>& slots, int64_t id) {
  Slot* slot = nullptr;
  {
    absl::MutexLock lock(&mu);
    auto it = slots.find(id);
    if (it == slots.end()) return;
    slot = it->second;
    slots.erase(it);
  }
  Slot::Retire(slot);
}

// What a handle needs to reach its repository: the table (kept alive with its library) and
// the repository handle, cleared once the repository is destroyed.
struct RepositoryLink {
  RepositoryLink(std::shared_ptr<const PluginLibrary> library, const RegistryPluginApi* api,
                 RegistryRepository* handle)
      : library(std::move(library)), api(api), handle(handle) {}

  const std::shared_ptr<const PluginLibrary> library;
  const RegistryPluginApi* const api;
  std::atomic<RegistryRepository*> handle;
};

}  // namespace internal

// One watch (PluginRepository::AddWatch). Removes the watch when destroyed or Remove()d. It may
// outlive its repository (destroying the repository stops every watch; Remove() then only frees
// the listener), but must not be removed while the repository is being destroyed.
class PluginWatch {
 public:
  using Slot = internal::CallbackSlot<DataChangedListener>;

  PluginWatch() = default;
  PluginWatch(std::shared_ptr<internal::RepositoryLink> link, int64_t id, Slot* slot)
      : link_(std::move(link)), id_(id), slot_(slot) {}
  PluginWatch(PluginWatch&& other) noexcept { *this = std::move(other); }
  PluginWatch& operator=(PluginWatch&& other) noexcept {
    if (this != &other) {
      Remove();
      link_ = std::move(other.link_);
      id_ = std::exchange(other.id_, 0);
      slot_ = std::exchange(other.slot_, nullptr);
    }
    return *this;
  }
  ~PluginWatch() { Remove(); }

  // Stops the watch. When it returns the listener is not running and is never called again,
  // except when Remove() runs inside the listener itself: that call finishes, no other follows.
  // No-op on an empty or removed handle.
  void Remove();

  // True until Remove().
  bool active() const { return slot_ != nullptr; }
  // The plugin's id of the watch (0 when empty).
  int64_t id() const { return active() ? id_ : 0; }

 private:
  std::shared_ptr<internal::RepositoryLink> link_;
  int64_t id_ = 0;
  Slot* slot_ = nullptr;
};

// One named lock (PluginRepository::GetLock): the semantics of registry_plugin.h's lock entries.
// Re-entrant per thread; only the holding thread unlocks. Destroying the handle removes its lost
// listeners but does not unlock a hold. It may outlive its repository: calls then fail with
// FailedPrecondition.
class PluginLock {
 public:
  // Called once per lost hold, from a plugin thread, with the lock's name and why.
  using LostListener = std::function<void(const std::string& name, const absl::Status& reason)>;

  // Takes ownership of `handle`, obtained through `api` of `library`.
  PluginLock(std::shared_ptr<const PluginLibrary> library, const RegistryPluginApi& api,
             RegistryLock* handle, std::string name)
      : library_(std::move(library)), api_(api), handle_(handle), name_(std::move(name)) {}
  // Releases the handle, which removes every listener: none runs after this.
  ~PluginLock();
  PluginLock(const PluginLock&) = delete;
  PluginLock& operator=(const PluginLock&) = delete;

  // The name as given to GetLock.
  const std::string& name() const { return name_; }

  // Blocks until the calling thread holds the lock (re-entry: at once, counted).
  absl::Status Lock();

  // As Lock(), giving up after `timeout` (rounded up to whole milliseconds; never earlier).
  // True iff the lock is now held. A zero or negative timeout makes one attempt that does not
  // wait.
  absl::StatusOr<bool> TryLock(absl::Duration timeout);

  // Ends one hold of the calling thread (the last releases the lock).
  absl::Status Unlock();

  absl::StatusOr<bool> IsHeldByCurrentThread();

  // Whether the current (or, when none, the most recent) hold was lost.
  absl::StatusOr<bool> IsLost();

  // Registers `listener` for every later lost hold; returns an id for RemoveLostListener.
  absl::StatusOr<int64_t> AddLostListener(LostListener listener);

  // After it returns the listener is not running and not called again (from inside the
  // listener: once the current call returns).
  void RemoveLostListener(int64_t id);

  // Fenced writes: as Persist / Delete, only while the repository holds the lock, atomically.
  absl::Status PersistIfHeld(absl::string_view key, absl::string_view value);
  absl::Status DeleteIfHeld(absl::string_view key);

 private:
  using LostSlot = internal::CallbackSlot<LostListener>;

  static void LostTrampoline(const char* name, int32_t code, const char* message,
                             void* user_data) noexcept;

  const std::shared_ptr<const PluginLibrary> library_;
  const RegistryPluginApi& api_;  // owned by library_
  RegistryLock* const handle_;
  const std::string name_;
  absl::Mutex mu_;
  std::map<int64_t, LostSlot*> listeners_ ABSL_GUARDED_BY(mu_);  // owned; freed by Retire
};

}  // namespace registry::plugin

#endif  // REGISTRY_HOST_PLUGIN_HANDLES_H_
