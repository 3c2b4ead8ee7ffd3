// SPDX-License-Identifier: Apache-2.0
// plugin/abi_entries.h
//
// The one list of the C table's entries after release_error (registry_plugin.h declares the
// struct itself), in the struct's order: each entry with the minor version that added it and the
// value the plugin-side adapter stores in it. The adapter fills a host's table from this list
// (abi_adapter.cc) and the loader checks a plugin's table against it (loader.cc), so a new entry is
// listed here once.
//
//   X(minor, member, adapter_value)   adapter_value is expanded inside FillApi only.
//
// Internal to plugin/.
#ifndef REGISTRY_PLUGIN_ABI_ENTRIES_H_
#define REGISTRY_PLUGIN_ABI_ENTRIES_H_

#include <cstddef>
#include <cstdint>

#include "plugin/registry_plugin.h"

namespace registry::plugin::internal {

// Whether a table of negotiated minor version `minor` has the entries added in `entry_minor`.
constexpr bool MinorIncludes(uint32_t minor, uint32_t entry_minor) { return minor >= entry_minor; }

}  // namespace registry::plugin::internal

// clang-format off
#define REGISTRY_PLUGIN_API_ENTRIES(X)                                                      \
  X(0, repository_type, descriptor.repository_type)                                         \
  X(0, plugin_version, descriptor.plugin_version)                                           \
  X(0, create_from_yaml, from_yaml)                                                         \
  X(0, create_from_yaml_file, from_yaml_file)                                               \
  X(0, create_from_props, from_props)                                                       \
  X(0, get, &Get)                                                                           \
  X(0, release_value, &ReleaseValue)                                                        \
  X(0, get_children, &GetChildren)                                                          \
  X(0, release_children, &ReleaseChildren)                                                  \
  X(0, exists, &Exists)                                                                     \
  X(0, persist, &Persist)                                                                   \
  X(0, update, &Update)                                                                     \
  X(0, delete_key, &DeleteKey)                                                              \
  X(0, persist_ephemeral, &PersistEphemeral)                                                \
  X(0, persist_exclusive_ephemeral, &PersistExclusiveEphemeral)                             \
  X(0, add_connection_listener, &AddConnectionListener)                                     \
  X(0, remove_connection_listener, &RemoveConnectionListener)                               \
  X(0, close, &Close)                                                                       \
  X(0, destroy, &Destroy)                                                                   \
  X(REGISTRY_PLUGIN_ABI_MINOR_WATCH, add_data_listener, &AddDataListener)                   \
  X(REGISTRY_PLUGIN_ABI_MINOR_WATCH, remove_data_listener, &RemoveDataListener)             \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, get_lock, &GetLock)                                     \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, release_lock, &ReleaseLock)                             \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, lock, &Lock)                                            \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, try_lock, &TryLock)                                     \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, unlock, &Unlock)                                        \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, lock_is_held, &LockIsHeld)                              \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, lock_is_lost, &LockIsLost)                              \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, add_lock_lost_listener, &AddLockLostListener)           \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, remove_lock_lost_listener, &RemoveLockLostListener)     \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, persist_if_held, &PersistIfHeld)                        \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOCK, delete_if_held, &DeleteIfHeld)                          \
  X(REGISTRY_PLUGIN_ABI_MINOR_FAIR_LOCK, get_fair_lock, &GetFairLock)                      \
  X(REGISTRY_PLUGIN_ABI_MINOR_SEMAPHORE, get_semaphore, &GetSemaphore)                      \
  X(REGISTRY_PLUGIN_ABI_MINOR_READ_WRITE_LOCK, get_read_write_lock, &GetReadWriteLock)  \
  X(REGISTRY_PLUGIN_ABI_MINOR_LOG, set_log_sink, &SetLogSink)                              \
  X(REGISTRY_PLUGIN_ABI_MINOR_METRICS, metrics_text, &MetricsText)                          \
  X(REGISTRY_PLUGIN_ABI_MINOR_METRICS, visit_metrics, &VisitMetrics)                         \
  X(REGISTRY_PLUGIN_ABI_MINOR_PERSIST_BATCH, persist_batch, &PersistBatch)                   \
  X(REGISTRY_PLUGIN_ABI_MINOR_EXPORT, list_entries, &ListEntries)                            \
  X(REGISTRY_PLUGIN_ABI_MINOR_EXPORT, store_key_prefix, &StoreKeyPrefix)                     \
  X(REGISTRY_PLUGIN_ABI_MINOR_EXPORT, check_batch, &CheckBatch)
// clang-format on

namespace registry::plugin::internal {

// The list must follow the struct: FillApi reports the end of the last entry it filled.
#define REGISTRY_ENTRY_OFFSET(minor, member, value) offsetof(RegistryPluginApi, member),
inline constexpr size_t kEntryOffsets[] = {REGISTRY_PLUGIN_API_ENTRIES(REGISTRY_ENTRY_OFFSET)};
#undef REGISTRY_ENTRY_OFFSET
constexpr bool EntriesFollowTheStruct() {
  for (size_t i = 1; i < sizeof(kEntryOffsets) / sizeof(kEntryOffsets[0]); ++i) {
    if (kEntryOffsets[i] <= kEntryOffsets[i - 1]) return false;
  }
  return true;
}
static_assert(EntriesFollowTheStruct(), "REGISTRY_PLUGIN_API_ENTRIES is out of the struct's order");

}  // namespace registry::plugin::internal

#endif  // REGISTRY_PLUGIN_ABI_ENTRIES_H_
