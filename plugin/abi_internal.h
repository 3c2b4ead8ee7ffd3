// plugin/abi_internal.h
//
// Shared by the files of the plugin-side adapter (abi_adapter.cc, abi_watch.cc, abi_lock.cc):
// the definition of the opaque repository handle, the exception barrier, and the table entries
// each file implements. Internal to plugin/: nothing outside the adapter includes it.
//
// Thread safety: as registry_plugin.h states for the table.
#ifndef REGISTRY_PLUGIN_ABI_INTERNAL_H_
#define REGISTRY_PLUGIN_ABI_INTERNAL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "plugin/abi_adapter.h"
#include "plugin/registry_plugin.h"
#include "registry/repository.h"

namespace registry::plugin::internal {

// Stores `code` and the concatenation of `a` and `b` in `error` using malloc only, so it is safe
// inside catch handlers where a second exception would terminate the process. Returns `code`.
int SetError(RegistryError* error, int code, const char* a, const char* b = "") noexcept;

// Runs `body` (returning absl::Status) and turns whatever happens into a C return code.
template <typename Body>
int Guarded(RegistryError* error, Body&& body) noexcept {
  try {
    return ReportStatus(body(), error);
  } catch (const std::bad_alloc&) {
    return SetError(error, REGISTRY_RESOURCE_EXHAUSTED, "registry plugin: out of memory");
  } catch (const std::exception& e) {
    return SetError(error, REGISTRY_INTERNAL, "registry plugin: uncaught exception: ", e.what());
  } catch (...) {
    return SetError(error, REGISTRY_INTERNAL, "registry plugin: uncaught non-standard exception");
  }
}

// InvalidArgument "registry plugin: argument '<name>' is NULL".
absl::Status NullArgument(const char* name);

// The bytes of a C value; InvalidArgument naming `key` for a NULL value with a non-zero length.
absl::StatusOr<absl::string_view> ValueView(const char* key, const char* value, size_t value_len);

// One C watch (add_data_listener): the host's callback and the state that lets removal wait for
// a running call. Shared by the table and the listener registered with the repository.
struct WatchSlot {
  RegistryDataCallback callback = nullptr;
  void* user_data = nullptr;
  std::string key;
  absl::Mutex call_mu;                    // held for each call of `callback`
  std::atomic<bool> active{true};         // cleared by removal, before it waits for call_mu
  std::atomic<std::thread::id> caller{};  // the thread inside `callback`, if any

  // Runs `callback` for `event` unless the watch was removed. Never throws.
  void Deliver(const DataChangedEvent& event) noexcept;
};

// The C watches of one repository handle. Repository::RemoveDataListener removes every listener
// of a key at once, while the C ABI removes one watch by id, so the table gives every C watch its
// own registration and keeps, per key, how many are live. Removing a watch deactivates it (its
// registration then ignores events); when the last live watch of a key goes, the key's
// registrations are removed from the repository. Registrations of removed watches therefore
// stay until their key has no live watch left (each costs an ignored call per event).
class WatchTable {
 public:
  absl::StatusOr<int64_t> Add(Repository& repository, const char* key, uint32_t options,
                              RegistryDataCallback callback, void* user_data);
  void Remove(Repository& repository, int64_t id);

 private:
  struct KeyState {
    int live = 0;             // watches added and not removed
    int adding = 0;           // Add() calls registering now
    bool releasing = false;   // RemoveDataListener(key) running: Add() waits
    bool registered = false;  // the repository holds registrations for the key
  };
  // Removes the key's registrations if it has no live or pending watch. Called with mu_ held;
  // releases and re-acquires it around the repository call.
  void ReleaseIfUnused(Repository& repository, const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;  // never held while the repository registers or calls back
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int64_t, std::shared_ptr<WatchSlot>> watches_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, KeyState> keys_ ABSL_GUARDED_BY(mu_);
};

// ---- Entries implemented in abi_watch.cc (1.1) and abi_lock.cc (1.2). ----

int AddDataListener(RegistryRepository* repository, const char* key, uint32_t options,
                    RegistryDataCallback callback, void* user_data, int64_t* watch_id,
                    RegistryError* error) noexcept;
int RemoveDataListener(RegistryRepository* repository, int64_t watch_id,
                       RegistryError* error) noexcept;

int GetLock(RegistryRepository* repository, const char* name, RegistryLock** out,
            RegistryError* error) noexcept;
void ReleaseLock(RegistryLock* lock) noexcept;
int Lock(RegistryLock* lock, RegistryError* error) noexcept;
int TryLock(RegistryLock* lock, int64_t timeout_ms, bool* acquired, RegistryError* error) noexcept;
int Unlock(RegistryLock* lock, RegistryError* error) noexcept;
int LockIsHeld(RegistryLock* lock, bool* held, RegistryError* error) noexcept;
int LockIsLost(RegistryLock* lock, bool* lost, RegistryError* error) noexcept;
int AddLockLostListener(RegistryLock* lock, RegistryLockLostCallback callback, void* user_data,
                        int64_t* listener_id, RegistryError* error) noexcept;
int RemoveLockLostListener(RegistryLock* lock, int64_t listener_id, RegistryError* error) noexcept;
int PersistIfHeld(RegistryLock* lock, const char* key, const char* value, size_t value_len,
                  RegistryError* error) noexcept;
int DeleteIfHeld(RegistryLock* lock, const char* key, RegistryError* error) noexcept;

}  // namespace registry::plugin::internal

// The opaque handles of registry_plugin.h. They live in the global namespace because the C header
// declares them there.
struct RegistryRepository {
  RegistryRepository(const registry::plugin::PluginDescriptor* descriptor,
                     std::unique_ptr<registry::Repository> impl)
      : descriptor(descriptor), impl(std::move(impl)) {}

  const registry::plugin::PluginDescriptor* const descriptor;
  std::unique_ptr<registry::Repository> impl;
  registry::plugin::internal::WatchTable watches;
  absl::Mutex locks_mu;
  // Created by the first get_lock; destroyed by destroy before `impl`.
  std::unique_ptr<registry::plugin::LockService> locks ABSL_GUARDED_BY(locks_mu);
};

struct RegistryLock {
  explicit RegistryLock(std::shared_ptr<registry::plugin::LockBackend> backend)
      : backend(std::move(backend)) {}

  const std::shared_ptr<registry::plugin::LockBackend> backend;
  absl::Mutex mu;
  std::set<int> listeners ABSL_GUARDED_BY(mu);  // lost-listener ids added through this handle
};

#endif  // REGISTRY_PLUGIN_ABI_INTERNAL_H_
