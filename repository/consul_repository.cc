// SPDX-License-Identifier: Apache-2.0
// repository/consul_repository.cc
#include "repository/consul_repository.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/client.h"
#include "consul/transport.h"
#include "consul/txn.h"
#include "repository/entry_listing.h"
#include "repository/key_space.h"
#include "repository/persistent_writes.h"
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
    RETURN_IF_ERROR(Check("Get", key, RootKey::kRejected));
    absl::StatusOr<consul::KvGetRawResult> result =
        client_.KvGetRaw(space_.ConsulKey(key), consul::ConsistentRead(), &canceller_);
    if (!result.ok()) return Failed("Get", key, result.status());
    return std::move(result->value);
  }

  absl::StatusOr<std::vector<std::string>> GetChildrenKeys(absl::string_view key) override {
    RETURN_IF_ERROR(Check("GetChildrenKeys", key, RootKey::kAllowed));
    const std::string prefix = space_.TreePrefix(key);
    absl::StatusOr<consul::KvKeysResult> result =
        client_.KvKeys(prefix, "/", consul::ConsistentRead(), &canceller_);
    if (!result.ok()) return Failed("GetChildrenKeys", key, result.status());
    return ChildNames(prefix, result->keys);
  }

  absl::StatusOr<bool> IsExisted(absl::string_view key) override {
    RETURN_IF_ERROR(Check("IsExisted", key, RootKey::kRejected));
    absl::StatusOr<consul::KvGetRawResult> result =
        client_.KvGetRaw(space_.ConsulKey(key), consul::ConsistentRead(), &canceller_);
    if (!result.ok()) return Failed("IsExisted", key, result.status());
    return result->value.has_value();
  }

  absl::Status Persist(absl::string_view key, absl::string_view value) override {
    RETURN_IF_ERROR(Check("Persist", key, RootKey::kRejected));
    const std::string consul_key = space_.ConsulKey(key);
    absl::Status status = keys_.PersistentWrites({consul_key}, /*tree=*/false, [&] {
      return PersistKey(client_, canceller_, key, consul_key, value);
    });
    return status.ok() ? status : Failed("Persist", key, status);
  }

  absl::Status Update(absl::string_view key, absl::string_view value) override {
    RETURN_IF_ERROR(Check("Update", key, RootKey::kRejected));
    const std::string consul_key = space_.ConsulKey(key);
    absl::Status status = keys_.Update(
        consul_key, value, [&] { return UpdateKey(client_, canceller_, key, consul_key, value); });
    return status.ok() ? status : Failed("Update", key, status);
  }

  absl::Status Delete(absl::string_view key) override {
    RETURN_IF_ERROR(Check("Delete", key, RootKey::kAllowed));
    const bool root = key == "/";
    const std::string consul_key = root ? space_.namespace_name() : space_.ConsulKey(key);
    absl::Status status = keys_.PersistentWrites({consul_key}, /*tree=*/true, [&] {
      return DeleteTree(client_, canceller_, root ? "" : consul_key, space_.TreePrefix(key));
    });
    return status.ok() ? status : Failed("Delete", key, status);
  }

  absl::Status PersistBatch(const std::vector<KeyValue>& entries, size_t* written) override {
    if (written != nullptr) *written = 0;
    std::vector<KeyValue> consul_entries;
    consul_entries.reserve(entries.size());
    for (const auto& [key, value] : entries) {
      RETURN_IF_ERROR(Check("PersistBatch", key, RootKey::kRejected));
      if (value.size() > consul::kMaxValueBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("PersistBatch '", Abbreviated(key), "': a value of ", value.size(),
                         " bytes exceeds the limit of ", consul::kMaxValueBytes, " bytes"));
      }
      consul_entries.emplace_back(space_.ConsulKey(key), value);
    }
    for (const BatchSlice& slice : SliceBatch(consul_entries, options_.txn_max_operations)) {
      std::vector<std::string> keys;
      for (size_t i = slice.begin; i < slice.end; ++i) keys.push_back(consul_entries[i].first);
      absl::Status status = keys_.PersistentWrites(keys, /*tree=*/false, [&] {
        return PersistSlice(client_, canceller_, consul_entries, slice);
      });
      if (!status.ok()) {
        return Failed("PersistBatch", entries[slice.begin].first,
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
      RETURN_IF_ERROR(Check(absl::StrCat("CheckBatch: entry ", i), key, RootKey::kRejected));
      if (value.size() > consul::kMaxValueBytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "CheckBatch: entry ", i, " '", Abbreviated(key), "': a value of ", value.size(),
            " bytes exceeds the limit of ", consul::kMaxValueBytes, " bytes"));
      }
    }
    if (bad_index != nullptr) *bad_index = entries.size();
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<StoredEntry>> ListEntries(absl::string_view key) override {
    RETURN_IF_ERROR(Check("ListEntries", key, RootKey::kAllowed));
    absl::StatusOr<std::vector<StoredEntry>> entries =
        ListSubtreeEntries(client_, canceller_, space_, key);
    if (!entries.ok()) return Failed("ListEntries", key, entries.status());
    return entries;
  }

  absl::StatusOr<std::string> StoreKeyPrefix() override { return space_.TreePrefix("/"); }

  absl::Status PersistEphemeral(absl::string_view key, absl::string_view value) override {
    RETURN_IF_ERROR(Check("PersistEphemeral", key, RootKey::kRejected));
    absl::Status status = keeper_.PersistEphemeral(space_.ConsulKey(key), value);
    return status.ok() ? status : Failed("PersistEphemeral", key, status);
  }

  absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view key,
                                                 absl::string_view value) override {
    RETURN_IF_ERROR(Check("PersistExclusiveEphemeral", key, RootKey::kRejected));
    absl::StatusOr<bool> created = keeper_.PersistExclusiveEphemeral(space_.ConsulKey(key), value);
    if (!created.ok()) return Failed("PersistExclusiveEphemeral", key, created.status());
    return created;
  }

  int AddConnectionListener(ConnectionListener listener) override {
    return connection_.AddConnectionListener(std::move(listener));
  }

  void RemoveConnectionListener(int id) override { connection_.RemoveConnectionListener(id); }

  using Repository::Watch;

  absl::StatusOr<WatchId> Watch(absl::string_view key, DataChangedListener listener,
                                const DataListenerOptions& options) override {
    RETURN_IF_ERROR(Check("Watch", key, RootKey::kAllowed));
    if (!listener)
      return absl::InvalidArgumentError(
          absl::StrCat("Watch '", Abbreviated(key), "': no listener"));
    // "/a" is the Consul key "ns/a" (covering "ns/a/..."); the root is the prefix "ns/".
    std::string consul_key = key == "/" ? space_.TreePrefix(key) : space_.ConsulKey(key);
    watch::WatchOptions watch_options;
    watch_options.replay_existing = options.replay_existing;
    // No lock is held while the engine lists the subtree or calls back.
    absl::StatusOr<watch::WatchId> id =
        engine_.Watch(std::move(consul_key), std::move(listener), watch_options);
    if (!id.ok()) return Failed("Watch", key, id.status());
    absl::MutexLock lock(&watch_mu_);
    if (watch_closed_) {  // Close() ran since the check: it closed the engine, which dropped it
      return absl::FailedPreconditionError(
          absl::StrCat("Watch '", Abbreviated(key), "': the repository is closed"));
    }
    watch_keys_.emplace(*id, std::string(key));
    return *id;  // the engine's id: unique and never reused within this repository
  }

  void RemoveWatch(WatchId id) override {
    RemoveWatches([id](WatchId watch, const std::string&) { return watch == id; });
  }

  void RemoveDataListener(absl::string_view key) override {
    RemoveWatches([key](WatchId, const std::string& watched) { return watched == key; });
  }

  absl::Status Close() override {
    // The keeper first: its stop cancels every request and lock waiter (through the canceller),
    // so that a data callback waiting in Lock() returns before the engine waits for it. The lock
    // losses that reports are tasks, which the executor's Stop() still runs, after the engine's
    // listeners are gone.
    absl::Status status = keeper_.Stop();
    {
      absl::MutexLock lock(&watch_mu_);
      watch_closed_ = true;
      watch_keys_.clear();
    }
    engine_.Close();
    tasks_.Stop();
    return status;
  }

 private:
  // Removes the watches `which` selects; returns once none of their listeners runs (unless
  // called from inside one, see WatchEngine::Remove).
  void RemoveWatches(absl::FunctionRef<bool(WatchId, const std::string& key)> which) {
    std::vector<watch::WatchId> ids;
    {
      absl::MutexLock lock(&watch_mu_);
      for (auto it = watch_keys_.begin(); it != watch_keys_.end();) {
        if (which(it->first, it->second)) {
          ids.push_back(it->first);
          it = watch_keys_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (watch::WatchId id : ids) engine_.Remove(id);  // waits for running calls, no lock held
  }

  // Validates `key` and fails once closed.
  absl::Status Check(absl::string_view operation, absl::string_view key, RootKey root) {
    if (absl::Status status = ValidateRepositoryKey(key, root); !status.ok()) {
      return Prefixed(operation, status);
    }
    if (keeper_.stopped()) {
      return absl::FailedPreconditionError(
          absl::StrCat(operation, " '", Abbreviated(key), "': the repository is closed"));
    }
    return absl::OkStatus();
  }

  // Prefixes `status` with the operation and the key; a request cancelled by Close() becomes
  // FailedPrecondition like every call after it.
  absl::Status Failed(absl::string_view operation, absl::string_view key, absl::Status status) {
    // Also a watch the closed engine refused between Check() and the engine's own check.
    if ((status.code() == absl::StatusCode::kCancelled ||
         status.code() == absl::StatusCode::kFailedPrecondition) &&
        keeper_.stopped()) {
      status = absl::FailedPreconditionError("the repository is closed");
    }
    return Prefixed(absl::StrCat(operation, " '", Abbreviated(key), "'"), status);
  }

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

  absl::Mutex watch_mu_;  // never held while the engine lists, removes or calls back
  bool watch_closed_ ABSL_GUARDED_BY(watch_mu_) = false;
  // Data listeners by repository key (several per key possible).
  std::map<WatchId, std::string> watch_keys_ ABSL_GUARDED_BY(watch_mu_);  // live watches' keys
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
