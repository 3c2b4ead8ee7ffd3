// SPDX-License-Identifier: Apache-2.0
// host/plugin_client.cc
#include "host/plugin_client.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "host/c_string_args.h"
#include "host/plugin_entries.h"

namespace registry::plugin {
namespace {

// What list_entries' visitor collects for ListEntries.
struct CollectedEntries {
  std::vector<Repository::StoredEntry> entries;
  bool out_of_memory = false;
};

// list_entries' visitor: appends a copy of `entry` to the CollectedEntries `user_data`.
void CollectEntry(const RegistryEntry* entry, void* user_data) noexcept {
  auto* collected = static_cast<CollectedEntries*>(user_data);
  try {
    Repository::StoredEntry copy;
    copy.key = entry->key;
    copy.value.assign(entry->value, entry->value_len);
    copy.flags = entry->flags;  // every field up to `ephemeral` is in the struct since 1.8
    copy.ephemeral = entry->ephemeral;
    collected->entries.push_back(std::move(copy));
  } catch (...) {
    collected->out_of_memory = true;  // an exception must not cross the C boundary
  }
}

// A batch of entries as the C ABI's parallel arrays (persist_batch, check_batch); it points into
// `entries`, which must outlive it.
struct BatchArrays {
  explicit BatchArrays(const std::vector<Repository::KeyValue>& entries) {
    keys.reserve(entries.size());
    values.reserve(entries.size());
    lens.reserve(entries.size());
    for (const auto& [key, value] : entries) {
      keys.push_back(key.c_str());
      values.push_back(value.data());
      lens.push_back(value.size());
    }
  }
  std::vector<const char*> keys;
  std::vector<const char*> values;
  std::vector<size_t> lens;
};

}  // namespace

PluginRepository::~PluginRepository() {
  api_.destroy(handle_);
  link_->handle.store(nullptr);
  absl::MutexLock lock(&mu_);
  for (auto& [id, slot] : listeners_) ListenerSlot::Retire(slot);
}

absl::StatusOr<std::optional<std::string>> PluginRepository::Get(absl::string_view key) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  char* value = nullptr;
  size_t len = 0;
  bool found = false;
  RegistryError error{};
  RETURN_IF_ERROR(
      TakeStatus(api_, api_.get(handle_, k.c_str(), &value, &len, &found, &error), &error));
  if (!found) return std::optional<std::string>();
  std::optional<std::string> result(std::in_place, value, len);
  api_.release_value(value);
  return result;
}

absl::StatusOr<std::vector<std::string>> PluginRepository::GetChildrenKeys(absl::string_view key) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  char** children = nullptr;
  size_t count = 0;
  RegistryError error{};
  RETURN_IF_ERROR(
      TakeStatus(api_, api_.get_children(handle_, k.c_str(), &children, &count, &error), &error));
  std::vector<std::string> names(children, children + count);
  api_.release_children(children, count);
  return names;
}

absl::StatusOr<bool> PluginRepository::IsExisted(absl::string_view key) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  bool exists = false;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(api_, api_.exists(handle_, k.c_str(), &exists, &error), &error));
  return exists;
}

absl::Status PluginRepository::Persist(absl::string_view key, absl::string_view value) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  RegistryError error{};
  return TakeStatus(api_, api_.persist(handle_, k.c_str(), value.data(), value.size(), &error),
                    &error);
}

absl::Status PluginRepository::PersistBatch(const std::vector<KeyValue>& entries, size_t* written) {
  if (!REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_PERSIST_BATCH, persist_batch)) {
    return Repository::PersistBatch(entries, written);
  }
  RETURN_IF_ERROR(CheckCStringKeys(entries, "key", nullptr));
  const BatchArrays batch(entries);
  RegistryError error{};
  const int code = api_.persist_batch(handle_, batch.keys.data(), batch.values.data(),
                                      batch.lens.data(), entries.size(), written, &error);
  return TakeStatus(api_, code, &error);
}

absl::Status PluginRepository::CheckBatch(const std::vector<KeyValue>& entries, size_t* bad_index) {
  if (bad_index != nullptr) *bad_index = entries.size();
  if (!SupportsExport()) return Missing("export and import", REGISTRY_PLUGIN_ABI_MINOR_EXPORT);
  RETURN_IF_ERROR(CheckCStringKeys(entries, "key", bad_index));
  const BatchArrays batch(entries);
  RegistryError error{};
  const int code = api_.check_batch(handle_, batch.keys.data(), batch.values.data(),
                                    batch.lens.data(), entries.size(), bad_index, &error);
  return TakeStatus(api_, code, &error);
}

absl::StatusOr<std::vector<Repository::StoredEntry>> PluginRepository::ListEntries(
    absl::string_view key) {
  if (!SupportsExport()) return Missing("export and import", REGISTRY_PLUGIN_ABI_MINOR_EXPORT);
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  CollectedEntries collected;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(
      api_, api_.list_entries(handle_, k.c_str(), &CollectEntry, &collected, &error), &error));
  if (collected.out_of_memory) {
    return absl::ResourceExhaustedError(
        absl::StrCat("ListEntries '", Abbreviated(key), "': out of memory copying the entries"));
  }
  return std::move(collected.entries);
}

absl::StatusOr<std::string> PluginRepository::StoreKeyPrefix() {
  if (!SupportsExport()) return Missing("export and import", REGISTRY_PLUGIN_ABI_MINOR_EXPORT);
  char* prefix = nullptr;
  size_t prefix_len = 0;
  RegistryError error{};
  RETURN_IF_ERROR(
      TakeStatus(api_, api_.store_key_prefix(handle_, &prefix, &prefix_len, &error), &error));
  std::string copy(prefix, prefix_len);
  api_.release_value(prefix);
  return copy;
}

absl::Status PluginRepository::Update(absl::string_view key, absl::string_view value) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  RegistryError error{};
  return TakeStatus(api_, api_.update(handle_, k.c_str(), value.data(), value.size(), &error),
                    &error);
}

absl::Status PluginRepository::Delete(absl::string_view key) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  RegistryError error{};
  return TakeStatus(api_, api_.delete_key(handle_, k.c_str(), &error), &error);
}

absl::Status PluginRepository::PersistEphemeral(absl::string_view key, absl::string_view value) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  RegistryError error{};
  return TakeStatus(
      api_, api_.persist_ephemeral(handle_, k.c_str(), value.data(), value.size(), &error), &error);
}

absl::StatusOr<bool> PluginRepository::PersistExclusiveEphemeral(absl::string_view key,
                                                                 absl::string_view value) {
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  bool created = false;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(api_,
                             api_.persist_exclusive_ephemeral(handle_, k.c_str(), value.data(),
                                                              value.size(), &created, &error),
                             &error));
  return created;
}

int PluginRepository::AddConnectionListener(ConnectionListener listener) {
  absl::StatusOr<int> id = AddConnectionListenerOrError(std::move(listener));
  return id.ok() ? *id : -1;
}

absl::StatusOr<int> PluginRepository::AddConnectionListenerOrError(ConnectionListener listener) {
  auto slot = std::make_unique<ListenerSlot>(std::move(listener));
  int64_t id = 0;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(
      api_, api_.add_connection_listener(handle_, &ConnectionTrampoline, slot.get(), &id, &error),
      &error));
  // A listener that removed itself before this line is not called again; its slot is freed
  // with the others after destroy.
  absl::MutexLock lock(&mu_);
  listeners_[id] = slot.release();
  return static_cast<int>(id);
}

void PluginRepository::RemoveConnectionListener(int id) {
  RegistryError error{};
  (void)TakeStatus(api_, api_.remove_connection_listener(handle_, id, &error), &error);
  internal::RetireSlot(mu_, listeners_, id);
}

absl::StatusOr<PluginWatch> PluginRepository::AddWatch(absl::string_view key,
                                                       DataChangedListener listener,
                                                       const DataListenerOptions& options) {
  if (!SupportsWatches()) return Missing("watches", REGISTRY_PLUGIN_ABI_MINOR_WATCH);
  if (!listener)
    return absl::InvalidArgumentError(absl::StrCat("Watch '", Abbreviated(key), "': no listener"));
  ASSIGN_OR_RETURN(const std::string k, CStringArgument(key, "key"));
  auto slot = std::make_unique<PluginWatch::Slot>(std::move(listener));
  int64_t id = 0;
  RegistryError error{};
  const uint32_t c_options = options.replay_existing ? REGISTRY_WATCH_REPLAY_EXISTING : 0u;
  RETURN_IF_ERROR(TakeStatus(api_,
                             api_.add_data_listener(handle_, k.c_str(), c_options, &WatchTrampoline,
                                                    slot.get(), &id, &error),
                             &error));
  return PluginWatch(link_, id, slot.release());
}

absl::StatusOr<Repository::WatchId> PluginRepository::Watch(absl::string_view key,
                                                            DataChangedListener listener,
                                                            const DataListenerOptions& options) {
  ASSIGN_OR_RETURN(PluginWatch watch, AddWatch(key, std::move(listener), options));
  const auto id = static_cast<WatchId>(watch.id());
  absl::MutexLock lock(&mu_);
  watches_.emplace(id, OwnedWatch{std::string(key), std::move(watch)});
  return id;
}

std::vector<PluginWatch> PluginRepository::TakeWatches(
    absl::FunctionRef<bool(WatchId, const std::string&)> which) {
  std::vector<PluginWatch> taken;
  absl::MutexLock lock(&mu_);
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (which(it->first, it->second.key)) {
      taken.push_back(std::move(it->second.watch));
      it = watches_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

void PluginRepository::RemoveWatch(WatchId id) {
  // Destroyed outside mu_: removal waits for running listener calls.
  TakeWatches([id](WatchId watch, const std::string&) { return watch == id; });
}

void PluginRepository::RemoveDataListener(absl::string_view key) {
  TakeWatches([key](WatchId, const std::string& watched) { return watched == key; });
}

absl::StatusOr<std::unique_ptr<PluginLock>> PluginRepository::GetLock(absl::string_view name) {
  if (!SupportsLocks()) return Missing("locks", REGISTRY_PLUGIN_ABI_MINOR_LOCK);
  return LockHandle(name, [this](const char* n, RegistryLock** out, RegistryError* error) {
    return api_.get_lock(handle_, n, out, error);
  });
}

absl::StatusOr<std::unique_ptr<PluginLock>> PluginRepository::GetFairLock(absl::string_view name) {
  if (!SupportsFairLocks()) return Missing("fair locks", REGISTRY_PLUGIN_ABI_MINOR_FAIR_LOCK);
  return LockHandle(name, [this](const char* n, RegistryLock** out, RegistryError* error) {
    return api_.get_fair_lock(handle_, n, out, error);
  });
}

absl::StatusOr<std::unique_ptr<PluginLock>> PluginRepository::GetSemaphore(absl::string_view name,
                                                                           int limit) {
  if (!SupportsSemaphores()) return Missing("semaphores", REGISTRY_PLUGIN_ABI_MINOR_SEMAPHORE);
  return LockHandle(name, [this, limit](const char* n, RegistryLock** out, RegistryError* error) {
    return api_.get_semaphore(handle_, n, static_cast<int32_t>(limit), out, error);
  });
}

absl::StatusOr<std::unique_ptr<PluginLock>> PluginRepository::GetReadLock(absl::string_view name) {
  return ReadWriteLockSide(name, 0);
}

absl::StatusOr<std::unique_ptr<PluginLock>> PluginRepository::GetWriteLock(absl::string_view name) {
  return ReadWriteLockSide(name, 1);
}

absl::StatusOr<std::unique_ptr<PluginLock>> PluginRepository::ReadWriteLockSide(
    absl::string_view name, int32_t write) {
  if (!SupportsReadWriteLocks()) {
    return Missing("read/write locks", REGISTRY_PLUGIN_ABI_MINOR_READ_WRITE_LOCK);
  }
  return LockHandle(name, [this, write](const char* n, RegistryLock** out, RegistryError* error) {
    return api_.get_read_write_lock(handle_, n, write, out, error);
  });
}

absl::StatusOr<std::unique_ptr<PluginLock>> PluginRepository::LockHandle(
    absl::string_view name,
    absl::FunctionRef<int(const char* name, RegistryLock** out, RegistryError* error)> get) {
  ASSIGN_OR_RETURN(const std::string n, CStringArgument(name, "lock name"));
  RegistryLock* lock = nullptr;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(api_, get(n.c_str(), &lock, &error), &error));
  return std::make_unique<PluginLock>(library_, api_, lock, n);
}

bool PluginRepository::SupportsWatches() const {
  return REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_WATCH, add_data_listener) &&
         REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_WATCH, remove_data_listener);
}

bool PluginRepository::SupportsLocks() const {
  return REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_LOCK, get_lock) &&
         REGISTRY_PLUGIN_API_HAS(&api_, delete_if_held);
}

bool PluginRepository::SupportsFairLocks() const {
  return SupportsLocks() &&
         REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_FAIR_LOCK, get_fair_lock);
}

bool PluginRepository::SupportsSemaphores() const {
  return SupportsLocks() &&
         REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_SEMAPHORE, get_semaphore);
}

bool PluginRepository::SupportsReadWriteLocks() const {
  return SupportsLocks() && REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_READ_WRITE_LOCK,
                                                  get_read_write_lock);
}

bool PluginRepository::SupportsExport() const {
  return REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_EXPORT, list_entries) &&
         REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_EXPORT, store_key_prefix) &&
         REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_EXPORT, check_batch);
}

absl::Status PluginRepository::Close() {
  RegistryError error{};
  return TakeStatus(api_, api_.close(handle_, &error), &error);
}

void PluginRepository::ConnectionTrampoline(int32_t state, void* user_data) noexcept {
  if (state < REGISTRY_CONNECTION_CONNECTED || state > REGISTRY_CONNECTION_RECONNECTED) return;
  ListenerSlot::Run(user_data, [state](const ConnectionListener& listener) {
    listener(static_cast<ConnectionState>(state));
  });
}

void PluginRepository::WatchTrampoline(const RegistryDataEvent* event, void* user_data) noexcept {
  if (event->type < REGISTRY_DATA_ADDED || event->type > REGISTRY_DATA_DELETED) return;
  PluginWatch::Slot::Run(user_data, [event](const DataChangedListener& listener) {
    DataChangedEvent e;
    e.type = static_cast<DataChangedEvent::Type>(event->type);
    e.key = event->key;
    if (event->value_known) e.value.emplace(event->value, event->value_len);
    if (offsetof(RegistryDataEvent, flags) + sizeof(event->flags) <= event->struct_size) {
      e.flags = event->flags;
    }
    listener(e);
  });
}

absl::Status PluginRepository::Missing(const char* what, uint32_t minor) const {
  return MissingEntries(library_->path(), api_.abi_version, what, minor);
}

}  // namespace registry::plugin
