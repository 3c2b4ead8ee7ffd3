// SPDX-License-Identifier: Apache-2.0
// host/plugin_client.h
//
// The C++ face of the registry plugin C ABI for hosts (compiled into the loader library:
// plugin_library.cc, plugin_client.cc). PluginLibrary owns a loaded
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
// host/loader.h.
//
// Thread safety: PluginLibrary's methods may be called concurrently. PluginRepository methods may
// be called concurrently, as registry::Repository promises; destruction must not race with them.
#ifndef REGISTRY_HOST_PLUGIN_CLIENT_H_
#define REGISTRY_HOST_PLUGIN_CLIENT_H_

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
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/log.h"
#include "host/plugin_handles.h"
#include "plugin/registry_plugin.h"
#include "registry/events.h"
#include "registry/repository.h"

namespace registry::plugin {

// Props as written under `props:`, in the order given.
using PropList = std::vector<std::pair<std::string, std::string>>;

class PluginRepository;

// One sample of the plugin's metrics (RegistryMetricSample, copied).
struct MetricSample {
  std::string family;  // e.g. "registry_consul_requests_total"
  std::string help;
  int32_t type = REGISTRY_METRIC_COUNTER;  // a RegistryMetricType
  std::string name;                        // the family's, or with _bucket, _sum, _count
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

class PluginLibrary : public std::enable_shared_from_this<PluginLibrary> {
 public:
  // Takes ownership of `dl_handle` (dlclose'd on destruction; nullptr for a plugin linked into
  // the host) and copies `api`, which the plugin filled by a successful RegistryPluginInit.
  // Must be owned by a std::shared_ptr (the Create methods share ownership).
  PluginLibrary(void* dl_handle, std::string path, const RegistryPluginApi& api)
      : dl_handle_(dl_handle), path_(std::move(path)), api_(api) {}
  ~PluginLibrary();
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

  // Sends the plugin's log records (of every repository in the process) at `min_level` or more
  // severe to `sink`, called on one plugin thread that does no network I/O, one at a time, with
  // secrets redacted; an empty sink goes back to stderr. Returns after the previous sink's last
  // call. Must not be called from inside the sink. A process has one sink: setting it through
  // another library of the same plugin replaces this one, and destroying the library that set it
  // last removes it. Unimplemented below ABI 1.6.
  absl::Status SetLogSink(LogSink sink, LogLevel min_level);

  // The plugin's metrics (every repository's in the process) in Prometheus' text exposition
  // format. Unimplemented below ABI 1.7.
  absl::StatusOr<std::string> MetricsText() const;
  // The same samples, read now, in the same order. Unimplemented below ABI 1.7.
  absl::StatusOr<std::vector<MetricSample>> Metrics() const;

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

  static void CollectSample(const RegistryMetricSample* sample, void* user_data) noexcept;
  static void LogTrampoline(int32_t level, int64_t unix_time_ms, const char* component,
                            const char* message, void* user_data) noexcept;

  void* const dl_handle_;
  const std::string path_;
  const RegistryPluginApi api_;
  absl::Mutex log_mu_;  // held across set_log_sink, so sinks are replaced one call at a time
  std::unique_ptr<LogSink> log_sink_ ABSL_GUARDED_BY(log_mu_);  // the user_data of the C sink
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
  ~PluginRepository() override;
  PluginRepository(const PluginRepository&) = delete;
  PluginRepository& operator=(const PluginRepository&) = delete;

  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override;

  absl::StatusOr<std::vector<std::string>> GetChildrenKeys(absl::string_view key) override;

  absl::StatusOr<bool> IsExisted(absl::string_view key) override;

  absl::Status Persist(absl::string_view key, absl::string_view value) override;

  // Repository::PersistBatch through persist_batch; below ABI 1.7, one persist per entry.
  absl::Status PersistBatch(const std::vector<KeyValue>& entries,
                            size_t* written = nullptr) override;

  // Repository::CheckBatch through check_batch: the checks of persist_batch, nothing written.
  // Unimplemented below ABI 1.8.
  absl::Status CheckBatch(const std::vector<KeyValue>& entries,
                          size_t* bad_index = nullptr) override;

  // Repository::ListEntries through list_entries: `key`'s subtree with raw values, flags and
  // which keys are ephemeral. Unimplemented below ABI 1.8 (the 1.0 entries cannot tell an
  // ephemeral key from a persistent one).
  absl::StatusOr<std::vector<StoredEntry>> ListEntries(absl::string_view key) override;

  // Repository::StoreKeyPrefix through store_key_prefix (Consul: "<namespace>/"). Unimplemented
  // below ABI 1.8.
  absl::StatusOr<std::string> StoreKeyPrefix() override;

  absl::Status Update(absl::string_view key, absl::string_view value) override;

  absl::Status Delete(absl::string_view key) override;

  absl::Status PersistEphemeral(absl::string_view key, absl::string_view value) override;

  absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view key,
                                                 absl::string_view value) override;

  // Returns the listener's id, or -1 if the plugin refused it (its status is then available
  // from AddConnectionListenerOrError).
  int AddConnectionListener(ConnectionListener listener) override;

  // As AddConnectionListener, with the plugin's error.
  absl::StatusOr<int> AddConnectionListenerOrError(ConnectionListener listener);

  // After it returns the listener is not running and not called again (from inside the
  // listener: once the current call returns, and its slot is freed then).
  void RemoveConnectionListener(int id) override;

  // Watches `key` and its subtree (the contract of Repository::Watch) until the returned handle
  // is destroyed or Remove()d. Errors: as Repository::Watch; Unimplemented when the plugin's
  // negotiated ABI has no watches (below 1.1).
  absl::StatusOr<PluginWatch> AddWatch(absl::string_view key, DataChangedListener listener,
                                       const DataListenerOptions& options = {});

  // Repository::Watch: as AddWatch, the watch being owned by this repository until
  // RemoveWatch(id), RemoveDataListener(key), Close() or destruction. The id is the plugin's.
  using Repository::Watch;
  absl::StatusOr<WatchId> Watch(absl::string_view key, DataChangedListener listener,
                                const DataListenerOptions& options) override;

  // Remove the watches that Watch() registered: `id`, or every one on exactly `key` (not those
  // of AddWatch, which their handles own).
  void RemoveWatch(WatchId id) override;
  void RemoveDataListener(absl::string_view key) override;

  // The lock called `name` (see registry_plugin.h get_lock). Errors: as get_lock; Unimplemented
  // when the plugin's negotiated ABI has no locks (below 1.2) or the plugin has none.
  absl::StatusOr<std::unique_ptr<PluginLock>> GetLock(absl::string_view name);
  // The fair lock called `name` (registry_plugin.h get_fair_lock), used as a PluginLock. Errors:
  // as get_fair_lock; Unimplemented when the negotiated ABI has no fair locks (below 1.3).
  absl::StatusOr<std::unique_ptr<PluginLock>> GetFairLock(absl::string_view name);
  // The semaphore called `name` with `limit` permits (registry_plugin.h get_semaphore), used as
  // a PluginLock whose Lock/TryLock take a permit and Unlock gives it back. Errors: as
  // get_semaphore; Unimplemented when the negotiated ABI has no semaphores (below 1.4).
  absl::StatusOr<std::unique_ptr<PluginLock>> GetSemaphore(absl::string_view name, int limit);
  // The read side / the write side of the read/write lock called `name` (registry_plugin.h
  // get_read_write_lock), each used as a PluginLock: many threads, across processes, hold the
  // read side at once; one holds the write side. A thread holding one side that locks the other
  // gets FailedPrecondition at once. Errors: as get_read_write_lock; Unimplemented when the
  // negotiated ABI has no read/write locks (below 1.5).
  absl::StatusOr<std::unique_ptr<PluginLock>> GetReadLock(absl::string_view name);
  absl::StatusOr<std::unique_ptr<PluginLock>> GetWriteLock(absl::string_view name);

  // Whether the negotiated table has the watch / lock / fair lock / semaphore / read/write lock
  // entries, and the export ones.
  bool SupportsWatches() const;
  bool SupportsLocks() const;
  bool SupportsFairLocks() const;
  bool SupportsSemaphores() const;
  bool SupportsReadWriteLocks() const;
  // Whether it has the 1.8 entries ListEntries, StoreKeyPrefix and CheckBatch go through.
  bool SupportsExport() const;

  absl::Status Close() override;

  const PluginLibrary& library() const { return *library_; }

 private:
  using ListenerSlot = internal::CallbackSlot<ConnectionListener>;

  static void ConnectionTrampoline(int32_t state, void* user_data) noexcept;
  static_assert(static_cast<int>(ConnectionState::kConnected) == REGISTRY_CONNECTION_CONNECTED &&
                static_cast<int>(ConnectionState::kSuspended) == REGISTRY_CONNECTION_SUSPENDED &&
                static_cast<int>(ConnectionState::kLost) == REGISTRY_CONNECTION_LOST &&
                static_cast<int>(ConnectionState::kReconnected) == REGISTRY_CONNECTION_RECONNECTED);

  static void WatchTrampoline(const RegistryDataEvent* event, void* user_data) noexcept;
  static_assert(static_cast<int>(DataChangedEvent::Type::kAdded) == REGISTRY_DATA_ADDED &&
                static_cast<int>(DataChangedEvent::Type::kUpdated) == REGISTRY_DATA_UPDATED &&
                static_cast<int>(DataChangedEvent::Type::kDeleted) == REGISTRY_DATA_DELETED);

  absl::Status Missing(const char* what, uint32_t minor) const;
  // GetReadLock (`write` 0) and GetWriteLock (1).
  absl::StatusOr<std::unique_ptr<PluginLock>> ReadWriteLockSide(absl::string_view name,
                                                                int32_t write);
  // A PluginLock for the handle that `get` (a call of get_lock, get_fair_lock, get_semaphore or
  // get_read_write_lock with the repository's handle) gives for `name`.
  absl::StatusOr<std::unique_ptr<PluginLock>> LockHandle(
      absl::string_view name,
      absl::FunctionRef<int(const char* name, RegistryLock** out, RegistryError* error)> get);

  const std::shared_ptr<const PluginLibrary> library_;
  const RegistryPluginApi& api_;  // owned by library_
  RegistryRepository* const handle_;
  const std::shared_ptr<internal::RepositoryLink> link_;  // shared with PluginWatch handles
  absl::Mutex mu_;
  // Owned; freed by ListenerSlot::Retire on removal or after destroy.
  std::map<int64_t, ListenerSlot*> listeners_ ABSL_GUARDED_BY(mu_);
  // Watches registered through Watch(), by id, with their keys; removed after destroy (they then
  // only free).
  struct OwnedWatch {
    std::string key;
    PluginWatch watch;
  };
  std::map<WatchId, OwnedWatch> watches_ ABSL_GUARDED_BY(mu_);
  // Takes the owned watches `which` selects out of watches_.
  std::vector<PluginWatch> TakeWatches(absl::FunctionRef<bool(WatchId, const std::string&)> which);
};

}  // namespace registry::plugin

#endif  // REGISTRY_HOST_PLUGIN_CLIENT_H_
