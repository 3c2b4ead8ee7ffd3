// SPDX-License-Identifier: Apache-2.0
// plugin/abi_internal.h
//
// Shared by the files of the plugin-side adapter (abi_adapter.cc, abi_watch.cc, abi_lock.cc,
// abi_log.cc, abi_metrics.cc, abi_batch.cc, abi_export.cc): the definition of the opaque
// repository handle, the exception barrier, and the table entries each file implements. Internal
// to plugin/: nothing outside the adapter includes it.
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
#include "lock/distributed_lock.h"
#include "plugin/abi_adapter.h"
#include "plugin/registry_plugin.h"
#include "registry/repository.h"

namespace registry::plugin::internal {

// Stores `code` and the concatenation of `a` and `b` in `error` using malloc only, so it is safe
// inside catch handlers where a second exception would terminate the process. Returns `code`.
int SetError(RegistryError* error, int code, const char* a, const char* b = "") noexcept;

// A malloc'd copy of `bytes` with a NUL after them (released with free, as release_value does).
// Throws std::bad_alloc, which Guarded() turns into a code.
char* CopyBytes(absl::string_view bytes);

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

// ---- Entries implemented in abi_watch.cc (1.1) and abi_lock.cc (1.2 to 1.5). ----

int AddDataListener(RegistryRepository* repository, const char* key, uint32_t options,
                    RegistryDataCallback callback, void* user_data, int64_t* watch_id,
                    RegistryError* error) noexcept;
int RemoveDataListener(RegistryRepository* repository, int64_t watch_id,
                       RegistryError* error) noexcept;

int GetLock(RegistryRepository* repository, const char* name, RegistryLock** out,
            RegistryError* error) noexcept;
int GetFairLock(RegistryRepository* repository, const char* name, RegistryLock** out,
                RegistryError* error) noexcept;
int GetSemaphore(RegistryRepository* repository, const char* name, int32_t limit,
                 RegistryLock** out, RegistryError* error) noexcept;
int GetReadWriteLock(RegistryRepository* repository, const char* name, int32_t write,
                     RegistryLock** out, RegistryError* error) noexcept;
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

int SetLogSink(RegistryLogCallback sink, void* user_data, int32_t min_level,
               RegistryError* error) noexcept;

// abi_batch.cc (1.7 persist_batch, 1.8 check_batch), abi_export.cc (the other 1.8 entries).
int PersistBatch(RegistryRepository* repository, const char* const* keys, const char* const* values,
                 const size_t* value_lens, size_t count, size_t* written,
                 RegistryError* error) noexcept;
int CheckBatch(RegistryRepository* repository, const char* const* keys, const char* const* values,
               const size_t* value_lens, size_t count, size_t* bad_index,
               RegistryError* error) noexcept;
int ListEntries(RegistryRepository* repository, const char* key, RegistryEntryCallback visit,
                void* user_data, RegistryError* error) noexcept;
int StoreKeyPrefix(RegistryRepository* repository, char** prefix, size_t* prefix_len,
                   RegistryError* error) noexcept;
int MetricsText(char** text, size_t* text_len, RegistryError* error) noexcept;
int VisitMetrics(RegistryMetricCallback visit, void* user_data, RegistryError* error) noexcept;

}  // namespace registry::plugin::internal

// The opaque handles of registry_plugin.h. They live in the global namespace because the C header
// declares them there.
struct RegistryRepository {
  RegistryRepository(const registry::plugin::PluginDescriptor* descriptor,
                     registry::plugin::MadeRepository made)
      : descriptor(descriptor),
        impl(std::move(made.repository)),
        new_lock_provider(std::move(made.new_lock_provider)) {}

  const registry::plugin::PluginDescriptor* const descriptor;
  std::unique_ptr<registry::Repository> impl;
  // Makes `locks` (MadeRepository::new_lock_provider); null: the plugin has no locks.
  const std::function<absl::StatusOr<std::unique_ptr<registry::lock::LockProvider>>()>
      new_lock_provider;
  absl::Mutex locks_mu;
  // Created by the first get_lock; destroyed by destroy before `impl`.
  std::unique_ptr<registry::lock::LockProvider> locks ABSL_GUARDED_BY(locks_mu);
};

struct RegistryLock {
  explicit RegistryLock(std::shared_ptr<registry::lock::DistributedLock> impl)
      : impl(std::move(impl)) {}

  const std::shared_ptr<registry::lock::DistributedLock> impl;
  absl::Mutex mu;
  std::set<int> listeners ABSL_GUARDED_BY(mu);  // lost-listener ids added through this handle
};

#endif  // REGISTRY_PLUGIN_ABI_INTERNAL_H_
