// SPDX-License-Identifier: Apache-2.0
// repository/consul_repository.cc
#include "repository/consul_repository.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/client.h"
#include "consul/transport.h"
#include "consul/txn.h"
#include "repository/call_checks.h"
#include "repository/entry_listing.h"
#include "repository/key_space.h"
#include "repository/persistent_writes.h"
#include "repository/repository_watches.h"
#include "repository/session_keeper.h"
#include "watch/watch_engine.h"

namespace registry {
namespace {

class ConsulRepositoryImpl final : public ConsulRepository {
 public:
  explicit ConsulRepositoryImpl(RepositoryParts parts)
      : owner_(std::move(parts.owner)),
        options_(parts.options),
        space_(parts.key_space),
        client_(parts.client),
        canceller_(parts.closing),
        tasks_(parts.tasks),
        keeper_(parts.keeper),
        keys_(parts.keys),
        connection_(parts.connection),
        engine_(parts.watches) {}

  ~ConsulRepositoryImpl() override { Close().IgnoreError(); }

  std::string CurrentSessionId() override { return keeper_.CurrentSessionId(); }

  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override {
    RETURN_IF_ERROR(checks_.Check("Get", key, RootKey::kRejected));
    absl::StatusOr<consul::KvGetRawResult> result =
        client_.KvGetRaw(space_.ConsulKey(key), consul::ConsistentRead(), &canceller_);
    if (!result.ok()) return checks_.Failed("Get", key, result.status());
    return std::move(result->value);
  }

  absl::StatusOr<std::vector<std::string>> GetChildrenKeys(absl::string_view key) override {
    RETURN_IF_ERROR(checks_.Check("GetChildrenKeys", key, RootKey::kAllowed));
    const std::string prefix = space_.TreePrefix(key);
    absl::StatusOr<consul::KvKeysResult> result =
        client_.KvKeys(prefix, "/", consul::ConsistentRead(), &canceller_);
    if (!result.ok()) return checks_.Failed("GetChildrenKeys", key, result.status());
    return ChildNames(prefix, result->keys);
  }

  absl::StatusOr<bool> IsExisted(absl::string_view key) override {
    RETURN_IF_ERROR(checks_.Check("IsExisted", key, RootKey::kRejected));
    absl::StatusOr<consul::KvGetRawResult> result =
        client_.KvGetRaw(space_.ConsulKey(key), consul::ConsistentRead(), &canceller_);
    if (!result.ok()) return checks_.Failed("IsExisted", key, result.status());
    return result->value.has_value();
  }

  absl::Status Persist(absl::string_view key, absl::string_view value) override {
    RETURN_IF_ERROR(checks_.Check("Persist", key, RootKey::kRejected));
    const std::string consul_key = space_.ConsulKey(key);
    absl::Status status = keys_.PersistentWrites({consul_key}, /*tree=*/false, [&] {
      return PersistKey(client_, canceller_, key, consul_key, value);
    });
    return status.ok() ? status : checks_.Failed("Persist", key, status);
  }

  absl::Status Update(absl::string_view key, absl::string_view value) override {
    RETURN_IF_ERROR(checks_.Check("Update", key, RootKey::kRejected));
    const std::string consul_key = space_.ConsulKey(key);
    absl::Status status = keys_.Update(
        consul_key, value, [&] { return UpdateKey(client_, canceller_, key, consul_key, value); });
    return status.ok() ? status : checks_.Failed("Update", key, status);
  }

  absl::Status Delete(absl::string_view key) override {
    RETURN_IF_ERROR(checks_.Check("Delete", key, RootKey::kAllowed));
    const bool root = key == "/";
    const std::string consul_key = root ? space_.namespace_name() : space_.ConsulKey(key);
    absl::Status status = keys_.PersistentWrites({consul_key}, /*tree=*/true, [&] {
      return DeleteTree(client_, canceller_, root ? "" : consul_key, space_.TreePrefix(key));
    });
    return status.ok() ? status : checks_.Failed("Delete", key, status);
  }

  absl::Status PersistBatch(const std::vector<KeyValue>& entries, size_t* written) override {
    if (written != nullptr) *written = 0;
    std::vector<KeyValue> consul_entries;
    consul_entries.reserve(entries.size());
    for (const auto& [key, value] : entries) {
      RETURN_IF_ERROR(checks_.CheckEntry("PersistBatch", key, value));
      consul_entries.emplace_back(space_.ConsulKey(key), value);
    }
    for (const BatchSlice& slice : SliceBatch(consul_entries, options_.txn_max_operations)) {
      std::vector<std::string> keys;
      for (size_t i = slice.begin; i < slice.end; ++i) keys.push_back(consul_entries[i].first);
      absl::Status status = keys_.PersistentWrites(keys, /*tree=*/false, [&] {
        return PersistSlice(client_, canceller_, consul_entries, slice);
      });
      if (!status.ok()) {
        return checks_.Failed("PersistBatch", entries[slice.begin].first,
                              Prefixed(absl::StrCat("entry ", slice.begin, " of ", entries.size(),
                                                    ", the first not written"),
                                       status));
      }
      if (written != nullptr) *written = slice.end;
    }
    return absl::OkStatus();
  }

  // The checks of PersistBatch, entry by entry, with the index of the first bad one.
  absl::Status CheckBatch(const std::vector<KeyValue>& entries, size_t* bad_index) override {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (bad_index != nullptr) *bad_index = i;
      const auto& [key, value] = entries[i];
      RETURN_IF_ERROR(checks_.CheckEntry(absl::StrCat("CheckBatch: entry ", i), key, value));
    }
    if (bad_index != nullptr) *bad_index = entries.size();
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<StoredEntry>> ListEntries(absl::string_view key) override {
    RETURN_IF_ERROR(checks_.Check("ListEntries", key, RootKey::kAllowed));
    absl::StatusOr<std::vector<StoredEntry>> entries =
        ListSubtreeEntries(client_, canceller_, space_, key);
    if (!entries.ok()) return checks_.Failed("ListEntries", key, entries.status());
    return entries;
  }

  absl::StatusOr<std::string> StoreKeyPrefix() override { return space_.TreePrefix("/"); }

  absl::Status PersistEphemeral(absl::string_view key, absl::string_view value) override {
    RETURN_IF_ERROR(checks_.Check("PersistEphemeral", key, RootKey::kRejected));
    absl::Status status = keeper_.PersistEphemeral(space_.ConsulKey(key), value);
    return status.ok() ? status : checks_.Failed("PersistEphemeral", key, status);
  }

  absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view key,
                                                 absl::string_view value) override {
    RETURN_IF_ERROR(checks_.Check("PersistExclusiveEphemeral", key, RootKey::kRejected));
    absl::StatusOr<bool> created = keeper_.PersistExclusiveEphemeral(space_.ConsulKey(key), value);
    if (!created.ok()) return checks_.Failed("PersistExclusiveEphemeral", key, created.status());
    return created;
  }

  int AddConnectionListener(ConnectionListener listener) override {
    return connection_.AddConnectionListener(std::move(listener));
  }

  void RemoveConnectionListener(int id) override { connection_.RemoveConnectionListener(id); }

  using Repository::Watch;

  absl::StatusOr<WatchId> Watch(absl::string_view key, DataChangedListener listener,
                                const DataListenerOptions& options) override {
    RETURN_IF_ERROR(checks_.Check("Watch", key, RootKey::kAllowed));
    if (!listener)
      return absl::InvalidArgumentError(
          absl::StrCat("Watch '", Abbreviated(key), "': no listener"));
    // "/a" is the Consul key "ns/a" (covering "ns/a/..."); the root is the prefix "ns/".
    std::string consul_key = key == "/" ? space_.TreePrefix(key) : space_.ConsulKey(key);
    absl::StatusOr<WatchId> id =
        watches_.Add(key, std::move(consul_key), std::move(listener), options);
    if (!id.ok()) return checks_.Failed("Watch", key, id.status());
    return id;
  }

  void RemoveWatch(WatchId id) override { watches_.RemoveById(id); }

  void RemoveDataListener(absl::string_view key) override { watches_.RemoveByKey(key); }

  absl::Status Close() override {
    // The keeper first: its stop cancels every request and lock waiter (through the canceller),
    // so that a data callback waiting in Lock() returns before the engine waits for it. The lock
    // losses that reports are tasks, which the executor's Stop() still runs, after the engine's
    // listeners are gone.
    absl::Status status = keeper_.Stop();
    watches_.Close();
    engine_.Close();
    tasks_.Stop();
    return status;
  }

 private:
  // Keeps every part below alive: declared first, so released after the repository's own state.
  const std::shared_ptr<void> owner_;
  const ConsulRepositoryOptions& options_;
  const KeySpace& space_;
  consul::Client& client_;
  consul::Canceller& canceller_;  // cancelled by Close(); shared by every request
  // The serial executor, and the workers of the engine's listeners; stopped by Close() after
  // the keeper and the engine, which post to it.
  watch::Dispatcher& tasks_;
  SessionKeeper& keeper_;
  RememberedKeys& keys_;
  ConnectionPublisher& connection_;
  watch::WatchEngine& engine_;
  const CallChecks checks_{keeper_};
  RepositoryWatches watches_{engine_};  // data watches by repository key
};

}  // namespace

absl::Status ValidateConsulRepositoryOptions(const ConsulRepositoryOptions& options) {
  if (absl::Status status = ValidateNamespace(options.namespace_name); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConsulRepositoryOptions.namespace_name: ", status.message()));
  }
  const limits::Timings timings = {options.session_ttl,
                                   options.block_query_wait,
                                   options.client.connect_timeout,
                                   options.client.request_timeout,
                                   options.session_lock_delay,
                                   options.lock_retry};
  const limits::TimingNames names = {"ConsulRepositoryOptions.session_ttl",
                                     "ConsulRepositoryOptions.block_query_wait",
                                     "ConsulRepositoryOptions.client.connect_timeout",
                                     "ConsulRepositoryOptions.client.request_timeout",
                                     "ConsulRepositoryOptions.session_lock_delay",
                                     "ConsulRepositoryOptions.lock_retry"};
  RETURN_IF_ERROR(limits::ValidateTimings(timings, names));
  if (absl::Status status = limits::ValidateNodeName(options.session_node); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConsulRepositoryOptions.session_node: ", status.message()));
  }
  if (options.txn_max_operations < limits::kMinTxnOperations ||
      options.txn_max_operations > limits::kMaxTxnOperations) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ConsulRepositoryOptions.txn_max_operations: ", options.txn_max_operations, " is not from ",
        limits::kMinTxnOperations, " to ", limits::kMaxTxnOperations));
  }
  if (options.watch_max_connections < 1 ||
      options.watch_max_connections > limits::kMaxWatchQueries) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ConsulRepositoryOptions.watch_max_connections: ", options.watch_max_connections,
        " is not from 1 to ", limits::kMaxWatchQueries));
  }
  return consul::ValidateClientOptions(options.client);
}

std::unique_ptr<ConsulRepository> NewConsulRepositoryOn(RepositoryParts parts) {
  return std::make_unique<ConsulRepositoryImpl>(std::move(parts));
}

}  // namespace registry
