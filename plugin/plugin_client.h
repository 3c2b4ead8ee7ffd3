// plugin/plugin_client.h
//
// Header-only C++ face of the registry plugin C ABI for hosts. PluginLibrary owns a loaded
// plugin (the dlopen handle and its negotiated table); PluginRepository owns one repository
// created through it and implements registry::Repository (watches included), so a host programs
// against the same contract whether the repository is linked in or loaded as a plugin; it also
// hands out RAII watch and lock handles (plugin_handles.h). Every C error becomes an
// absl::Status with the plugin's code and message. Against a plugin whose negotiated ABI lacks
// an entry (a 1.0 plugin has no watches, a 1.1 plugin no locks) the call fails with
// Unimplemented naming the version, and the entry is never called.
//
// Lifetime: a PluginRepository keeps its PluginLibrary alive, so the library handle is closed
// only after the last repository created from it is destroyed. Obtain libraries from
// plugin/loader.h.
//
// Thread safety: PluginLibrary is immutable after construction. PluginRepository methods may be
// called concurrently, as registry::Repository promises; destruction must not race with them.
#ifndef REGISTRY_PLUGIN_PLUGIN_CLIENT_H_
#define REGISTRY_PLUGIN_PLUGIN_CLIENT_H_

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "plugin/plugin_handles.h"
#include "plugin/registry_plugin.h"
#include "registry/events.h"
#include "registry/repository.h"

namespace registry::plugin {

// Props as written under `props:`, in the order given.
using PropList = std::vector<std::pair<std::string, std::string>>;

// Returns the name of a RegistryConnectionState ("CONNECTED", ...), or "UNKNOWN".
inline const char* ConnectionStateCName(int32_t state) {
  switch (state) {
    case REGISTRY_CONNECTION_CONNECTED:
      return "CONNECTED";
    case REGISTRY_CONNECTION_SUSPENDED:
      return "SUSPENDED";
    case REGISTRY_CONNECTION_LOST:
      return "LOST";
    case REGISTRY_CONNECTION_RECONNECTED:
      return "RECONNECTED";
    default:
      return "UNKNOWN";
  }
}

class PluginRepository;

class PluginLibrary : public std::enable_shared_from_this<PluginLibrary> {
 public:
  // Takes ownership of `dl_handle` (dlclose'd on destruction; nullptr for a plugin linked into
  // the host) and copies `api`, which the plugin filled by a successful RegistryPluginInit.
  // Must be owned by a std::shared_ptr (the Create methods share ownership).
  PluginLibrary(void* dl_handle, std::string path, const RegistryPluginApi& api)
      : dl_handle_(dl_handle), path_(std::move(path)), api_(api) {}
  ~PluginLibrary() {
    if (dl_handle_ != nullptr) dlclose(dl_handle_);
  }
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const RegistryPluginApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  uint32_t abi_version() const { return api_.abi_version; }
  absl::string_view repository_type() const { return api_.repository_type; }
  absl::string_view plugin_version() const { return api_.plugin_version; }

  // Creates a repository from registry YAML text, with `overrides` applied as props on top.
  absl::StatusOr<std::unique_ptr<PluginRepository>> CreateFromYaml(absl::string_view yaml,
                                                                   const PropList& overrides = {});
  // Creates a repository from the registry YAML file at `path`, with `overrides` on top.
  absl::StatusOr<std::unique_ptr<PluginRepository>> CreateFromYamlFile(
      const std::string& path, const PropList& overrides = {});
  // Creates a repository from a props map alone (plus optional "type" and "overwrite").
  absl::StatusOr<std::unique_ptr<PluginRepository>> CreateFromProps(const PropList& props);

 private:
  // Converts `props` into the parallel C arrays the table takes; valid while `props` lives.
  struct CArrays {
    explicit CArrays(const PropList& props) {
      for (const auto& [key, value] : props) {
        keys.push_back(key.c_str());
        values.push_back(value.c_str());
      }
    }
    std::vector<const char*> keys;
    std::vector<const char*> values;
  };

  absl::StatusOr<std::unique_ptr<PluginRepository>> Wrap(int code, RegistryError* error,
                                                         RegistryRepository* handle);

  void* const dl_handle_;
  const std::string path_;
  const RegistryPluginApi api_;
};

class PluginRepository final : public Repository {
 public:
  // Takes ownership of `handle`, created by `library`.
  PluginRepository(std::shared_ptr<const PluginLibrary> library, RegistryRepository* handle)
      : library_(std::move(library)),
        api_(library_->api()),
        handle_(handle),
        link_(std::make_shared<internal::RepositoryLink>(library_, &api_, handle)) {}
  // Closes the repository (ephemeral keys vanish) and frees the handle; listeners are not called
  // afterwards. PluginWatch handles still held by the host then only free their listener.
  // The listener slots are freed only after destroy has stopped callbacks.
  ~PluginRepository() override {
    api_.destroy(handle_);
    link_->handle.store(nullptr);
    absl::MutexLock lock(&mu_);
    for (auto& [id, slot] : listeners_) ListenerSlot::Retire(slot);
  }
  PluginRepository(const PluginRepository&) = delete;
  PluginRepository& operator=(const PluginRepository&) = delete;

  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override {
    const std::string k(key);
    char* value = nullptr;
    size_t len = 0;
    bool found = false;
    RegistryError error{};
    absl::Status status =
        TakeStatus(api_, api_.get(handle_, k.c_str(), &value, &len, &found, &error), &error);
    if (!status.ok()) return status;
    if (!found) return std::optional<std::string>();
    std::optional<std::string> result(std::in_place, value, len);
    api_.release_value(value);
    return result;
  }

  absl::StatusOr<std::vector<std::string>> GetChildrenKeys(absl::string_view key) override {
    const std::string k(key);
    char** children = nullptr;
    size_t count = 0;
    RegistryError error{};
    absl::Status status =
        TakeStatus(api_, api_.get_children(handle_, k.c_str(), &children, &count, &error), &error);
    if (!status.ok()) return status;
    std::vector<std::string> names(children, children + count);
    api_.release_children(children, count);
    return names;
  }

  absl::StatusOr<bool> IsExisted(absl::string_view key) override {
    const std::string k(key);
    bool exists = false;
    RegistryError error{};
    absl::Status status =
        TakeStatus(api_, api_.exists(handle_, k.c_str(), &exists, &error), &error);
    if (!status.ok()) return status;
    return exists;
  }

  absl::Status Persist(absl::string_view key, absl::string_view value) override {
    const std::string k(key);
    RegistryError error{};
    return TakeStatus(api_, api_.persist(handle_, k.c_str(), value.data(), value.size(), &error),
                      &error);
  }

  absl::Status Update(absl::string_view key, absl::string_view value) override {
    const std::string k(key);
    RegistryError error{};
    return TakeStatus(api_, api_.update(handle_, k.c_str(), value.data(), value.size(), &error),
                      &error);
  }

  absl::Status Delete(absl::string_view key) override {
    const std::string k(key);
    RegistryError error{};
    return TakeStatus(api_, api_.delete_key(handle_, k.c_str(), &error), &error);
  }

  absl::Status PersistEphemeral(absl::string_view key, absl::string_view value) override {
    const std::string k(key);
    RegistryError error{};
    return TakeStatus(
        api_, api_.persist_ephemeral(handle_, k.c_str(), value.data(), value.size(), &error),
        &error);
  }

  absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view key,
                                                 absl::string_view value) override {
    const std::string k(key);
    bool created = false;
    RegistryError error{};
    absl::Status status =
        TakeStatus(api_,
                   api_.persist_exclusive_ephemeral(handle_, k.c_str(), value.data(), value.size(),
                                                    &created, &error),
                   &error);
    if (!status.ok()) return status;
    return created;
  }

  // Returns the listener's id, or -1 if the plugin refused it (its status is then available
  // from AddConnectionListenerOrError).
  int AddConnectionListener(ConnectionListener listener) override {
    absl::StatusOr<int> id = AddConnectionListenerOrError(std::move(listener));
    return id.ok() ? *id : -1;
  }

  // As AddConnectionListener, with the plugin's error.
  absl::StatusOr<int> AddConnectionListenerOrError(ConnectionListener listener) {
    auto slot = std::make_unique<ListenerSlot>(std::move(listener));
    int64_t id = 0;
    RegistryError error{};
    absl::Status status = TakeStatus(
        api_, api_.add_connection_listener(handle_, &ConnectionTrampoline, slot.get(), &id, &error),
        &error);
    if (!status.ok()) return status;
    // A listener that removed itself before this line is not called again; its slot is freed
    // with the others after destroy.
    absl::MutexLock lock(&mu_);
    listeners_[id] = slot.release();
    return static_cast<int>(id);
  }

  // After it returns the listener is not running and not called again (from inside the
  // listener: once the current call returns, and its slot is freed then).
  void RemoveConnectionListener(int id) override {
    RegistryError error{};
    (void)TakeStatus(api_, api_.remove_connection_listener(handle_, id, &error), &error);
    internal::RetireSlot(mu_, listeners_, id);
  }

  // Watches `key` and its subtree (the contract of Repository::Watch) until the returned handle
  // is destroyed or Remove()d. Errors: as Repository::Watch; Unimplemented when the plugin's
  // negotiated ABI has no watches (below 1.1).
  absl::StatusOr<PluginWatch> AddWatch(absl::string_view key, DataChangedListener listener,
                                       const DataListenerOptions& options = {}) {
    if (!SupportsWatches()) return Missing("watches", REGISTRY_PLUGIN_ABI_MINOR_WATCH);
    if (!listener)
      return absl::InvalidArgumentError(absl::StrCat("Watch '", key, "': no listener"));
    const std::string k(key);
    auto slot = std::make_unique<PluginWatch::Slot>(std::move(listener));
    int64_t id = 0;
    RegistryError error{};
    const uint32_t c_options = options.replay_existing ? REGISTRY_WATCH_REPLAY_EXISTING : 0u;
    absl::Status status =
        TakeStatus(api_,
                   api_.add_data_listener(handle_, k.c_str(), c_options, &WatchTrampoline,
                                          slot.get(), &id, &error),
                   &error);
    if (!status.ok()) return status;
    return PluginWatch(link_, id, slot.release());
  }

  // Repository::Watch: as AddWatch, the watch being owned by this repository until
  // RemoveDataListener(key), Close() or destruction.
  using Repository::Watch;
  absl::Status Watch(absl::string_view key, DataChangedListener listener,
                     const DataListenerOptions& options) override {
    absl::StatusOr<PluginWatch> watch = AddWatch(key, std::move(listener), options);
    if (!watch.ok()) return watch.status();
    absl::MutexLock lock(&mu_);
    watches_.emplace(std::string(key), std::move(*watch));
    return absl::OkStatus();
  }

  // Removes every watch that Watch() registered on exactly `key` (not those of AddWatch).
  void RemoveDataListener(absl::string_view key) override {
    std::vector<PluginWatch> removed;
    {
      absl::MutexLock lock(&mu_);
      auto [first, last] = watches_.equal_range(std::string(key));
      for (auto it = first; it != last; ++it) removed.push_back(std::move(it->second));
      watches_.erase(first, last);
    }
    removed.clear();  // outside mu_: removal waits for running listener calls
  }

  // The lock called `name` (see registry_plugin.h get_lock). Errors: as get_lock; Unimplemented
  // when the plugin's negotiated ABI has no locks (below 1.2) or the plugin has none.
  absl::StatusOr<std::unique_ptr<PluginLock>> GetLock(absl::string_view name) {
    if (!SupportsLocks()) return Missing("locks", REGISTRY_PLUGIN_ABI_MINOR_LOCK);
    const std::string n(name);
    RegistryLock* lock = nullptr;
    RegistryError error{};
    absl::Status status =
        TakeStatus(api_, api_.get_lock(handle_, n.c_str(), &lock, &error), &error);
    if (!status.ok()) return status;
    return std::make_unique<PluginLock>(library_, api_, lock, n);
  }

  // Whether the negotiated table has the watch / lock entries.
  bool SupportsWatches() const {
    return REGISTRY_PLUGIN_ABI_MINOR(api_.abi_version) >= REGISTRY_PLUGIN_ABI_MINOR_WATCH &&
           REGISTRY_PLUGIN_API_HAS(&api_, remove_data_listener) &&
           api_.add_data_listener != nullptr && api_.remove_data_listener != nullptr;
  }
  bool SupportsLocks() const {
    return REGISTRY_PLUGIN_ABI_MINOR(api_.abi_version) >= REGISTRY_PLUGIN_ABI_MINOR_LOCK &&
           REGISTRY_PLUGIN_API_HAS(&api_, delete_if_held) && api_.get_lock != nullptr;
  }

  absl::Status Close() override {
    RegistryError error{};
    return TakeStatus(api_, api_.close(handle_, &error), &error);
  }

  const PluginLibrary& library() const { return *library_; }

 private:
  using ListenerSlot = internal::CallbackSlot<ConnectionListener>;

  static void ConnectionTrampoline(int32_t state, void* user_data) noexcept {
    if (state < REGISTRY_CONNECTION_CONNECTED || state > REGISTRY_CONNECTION_RECONNECTED) return;
    ListenerSlot::Run(user_data, [state](const ConnectionListener& listener) {
      listener(static_cast<ConnectionState>(state));
    });
  }
  static_assert(static_cast<int>(ConnectionState::kConnected) == REGISTRY_CONNECTION_CONNECTED &&
                static_cast<int>(ConnectionState::kSuspended) == REGISTRY_CONNECTION_SUSPENDED &&
                static_cast<int>(ConnectionState::kLost) == REGISTRY_CONNECTION_LOST &&
                static_cast<int>(ConnectionState::kReconnected) == REGISTRY_CONNECTION_RECONNECTED);

  static void WatchTrampoline(const RegistryDataEvent* event, void* user_data) noexcept {
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
  static_assert(static_cast<int>(DataChangedEvent::Type::kAdded) == REGISTRY_DATA_ADDED &&
                static_cast<int>(DataChangedEvent::Type::kUpdated) == REGISTRY_DATA_UPDATED &&
                static_cast<int>(DataChangedEvent::Type::kDeleted) == REGISTRY_DATA_DELETED);

  absl::Status Missing(const char* what, uint32_t minor) const {
    return absl::UnimplementedError(
        absl::StrCat("registry plugin ", library_->path(), " has no ", what, ": it negotiated ABI ",
                     REGISTRY_PLUGIN_ABI_MAJOR(api_.abi_version), ".",
                     REGISTRY_PLUGIN_ABI_MINOR(api_.abi_version), ", ", what, " need 1.", minor));
  }

  const std::shared_ptr<const PluginLibrary> library_;
  const RegistryPluginApi& api_;  // owned by library_
  RegistryRepository* const handle_;
  const std::shared_ptr<internal::RepositoryLink> link_;  // shared with PluginWatch handles
  absl::Mutex mu_;
  // Owned; freed by ListenerSlot::Retire on removal or after destroy.
  std::map<int64_t, ListenerSlot*> listeners_ ABSL_GUARDED_BY(mu_);
  // Watches registered through Watch(), by key; removed after destroy (they then only free).
  std::multimap<std::string, PluginWatch> watches_ ABSL_GUARDED_BY(mu_);
};

inline absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::Wrap(
    int code, RegistryError* error, RegistryRepository* handle) {
  absl::Status status = TakeStatus(api_, code, error);
  if (!status.ok()) return status;
  return std::make_unique<PluginRepository>(shared_from_this(), handle);
}

inline absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::CreateFromYaml(
    absl::string_view yaml, const PropList& overrides) {
  CArrays c(overrides);
  RegistryRepository* handle = nullptr;
  RegistryError error{};
  // An empty string_view may carry a null data(); the table takes NULL as a missing argument.
  int code = api_.create_from_yaml(yaml.empty() ? "" : yaml.data(), yaml.size(), c.keys.data(),
                                   c.values.data(), overrides.size(), &handle, &error);
  return Wrap(code, &error, handle);
}

inline absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::CreateFromYamlFile(
    const std::string& path, const PropList& overrides) {
  CArrays c(overrides);
  RegistryRepository* handle = nullptr;
  RegistryError error{};
  int code = api_.create_from_yaml_file(path.c_str(), c.keys.data(), c.values.data(),
                                        overrides.size(), &handle, &error);
  return Wrap(code, &error, handle);
}

inline absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::CreateFromProps(
    const PropList& props) {
  CArrays c(props);
  RegistryRepository* handle = nullptr;
  RegistryError error{};
  int code = api_.create_from_props(c.keys.data(), c.values.data(), props.size(), &handle, &error);
  return Wrap(code, &error, handle);
}

}  // namespace registry::plugin

#endif  // REGISTRY_PLUGIN_PLUGIN_CLIENT_H_
