// SPDX-License-Identifier: Apache-2.0
// tests/plugin/memory_plugin.cc
//
// libregistry_memory.so: a test plugin serving `type: Memory` through the same ABI adapter as
// the Consul plugin, over an in-process map. It lets the loader, the adapter and the C++ wrapper
// be tested without a server. Test hooks:
//   - a key whose last segment is "throw" makes every call on it throw std::runtime_error;
//   - a prop or override "fail" = "<message>" makes creation fail with InvalidArgument;
//   - every connection listener is told CONNECTED once, from a background thread;
//   - Persist("/test/lose_lock", NAME) stores nothing and makes the hold of lock NAME lost;
//   - the DELETED event of a key whose last segment is "forgotten" carries no value;
//   - ListEntries reports a key as ephemeral while PersistEphemeral's write is its last, and with
//     flags 7 when its last segment is "flagged"; the store key prefix is "memory/".
// Watches are delivered by one background thread per repository; locks are memory_locks.h.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "plugin/abi_adapter.h"
#include "plugin/registry_plugin.h"
#include "registry/repository.h"
#include "tests/plugin/memory_locks.h"

namespace registry::plugin {
namespace {

constexpr char kLoseLockKey[] = "/test/lose_lock";

// True iff a watch on `watched` covers `key`.
bool Covers(absl::string_view watched, absl::string_view key) {
  return watched == "/" || key == watched ||
         (absl::StartsWith(key, watched) && key[watched.size()] == '/');
}

class MemoryRepository final : public Repository {
 public:
  ~MemoryRepository() override {
    (void)Close();
    if (deliverer_.joinable()) deliverer_.join();  // Close() from a listener cannot join it
  }

  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    auto it = data_.find(std::string(key));
    if (it == data_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }

  absl::StatusOr<std::vector<std::string>> GetChildrenKeys(absl::string_view key) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    const std::string prefix = key == "/" ? "/" : absl::StrCat(key, "/");
    std::vector<std::string> names;
    absl::MutexLock lock(&mu_);
    for (auto it = data_.lower_bound(prefix); it != data_.end(); ++it) {
      if (!absl::StartsWith(it->first, prefix)) break;
      std::string name = it->first.substr(prefix.size());
      name = name.substr(0, name.find('/'));
      if (names.empty() || names.back() != name) names.push_back(name);
    }
    return names;
  }

  absl::StatusOr<bool> IsExisted(absl::string_view key) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    return data_.count(std::string(key)) > 0;
  }

  absl::Status Persist(absl::string_view key, absl::string_view value) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    if (key == kLoseLockKey) {
      absl::MutexLock lock(&mu_);
      if (locks_ != nullptr) locks_->LoseLock(std::string(value));
      return absl::OkStatus();
    }
    absl::MutexLock lock(&mu_);
    Set(std::string(key), std::string(value));
    ephemeral_.erase(std::string(key));
    return absl::OkStatus();
  }

  absl::Status CheckBatch(const std::vector<KeyValue>& entries, size_t* bad_index) override {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (bad_index != nullptr) *bad_index = i;
      if (absl::Status s = Check(entries[i].first); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("entry ", i, ": ", s.message()));
      }
    }
    if (bad_index != nullptr) *bad_index = entries.size();
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<StoredEntry>> ListEntries(absl::string_view key) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    std::vector<StoredEntry> entries;
    absl::MutexLock lock(&mu_);
    for (const auto& [k, v] : data_) {
      if (!Covers(key, k)) continue;
      entries.push_back({.key = k,
                         .value = v,
                         .flags = absl::EndsWith(k, "/flagged") ? 7u : 0u,
                         .ephemeral = ephemeral_.count(k) > 0});
    }
    return entries;
  }

  absl::StatusOr<std::string> StoreKeyPrefix() override { return std::string("memory/"); }

  absl::Status Update(absl::string_view key, absl::string_view value) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    if (data_.count(std::string(key)) == 0) {
      return absl::NotFoundError(absl::StrCat("update: key '", key, "'"));
    }
    Set(std::string(key), std::string(value));
    return absl::OkStatus();
  }

  absl::Status Delete(absl::string_view key) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    const std::string prefix = key == "/" ? "/" : absl::StrCat(key, "/");
    absl::MutexLock lock(&mu_);
    if (auto it = data_.find(std::string(key)); it != data_.end()) {
      Publish(DataChangedEvent::Type::kDeleted, it->first, it->second);
      data_.erase(it);
    }
    for (auto it = data_.lower_bound(prefix);
         it != data_.end() && absl::StartsWith(it->first, prefix);) {
      Publish(DataChangedEvent::Type::kDeleted, it->first, it->second);
      ephemeral_.erase(it->first);
      it = data_.erase(it);
    }
    ephemeral_.erase(std::string(key));
    return absl::OkStatus();
  }

  absl::Status PersistEphemeral(absl::string_view key, absl::string_view value) override {
    if (absl::Status s = Persist(key, value); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    ephemeral_.insert(std::string(key));
    return absl::OkStatus();
  }

  absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view key,
                                                 absl::string_view value) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    if (data_.count(std::string(key)) > 0) return false;
    Set(std::string(key), std::string(value));
    ephemeral_.insert(std::string(key));
    return true;
  }

  using Repository::Watch;
  absl::StatusOr<WatchId> Watch(absl::string_view key, DataChangedListener listener,
                                const DataListenerOptions& options) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    if (!deliverer_.joinable()) deliverer_ = std::thread([this] { Deliver(); });
    const uint64_t id = next_watch_id_++;
    watches_[id] = WatchEntry{std::string(key), std::move(listener)};
    if (options.replay_existing) {
      for (const auto& [k, v] : data_) {
        if (Covers(key, k)) queue_.push_back({id, {DataChangedEvent::Type::kAdded, k, v, 0}});
      }
    }
    return id;
  }

  void RemoveWatch(WatchId id) override {
    RemoveWatches([id](uint64_t watch, const std::string&) { return watch == id; });
  }

  void RemoveDataListener(absl::string_view key) override {
    RemoveWatches([key](uint64_t, const std::string& watched) { return watched == key; });
  }

  // Removes the watches `which` selects and waits until none of them runs (unless called from
  // inside a listener).
  void RemoveWatches(const std::function<bool(uint64_t, const std::string&)>& which) {
    absl::MutexLock lock(&mu_);
    std::vector<uint64_t> removed;
    for (auto it = watches_.begin(); it != watches_.end();) {
      if (which(it->first, it->second.key)) {
        removed.push_back(it->first);
        it = watches_.erase(it);
      } else {
        ++it;
      }
    }
    if (std::this_thread::get_id() == deliverer_.get_id()) return;  // from inside a listener
    struct Waiting {
      MemoryRepository* self;
      const std::vector<uint64_t>* ids;
    } waiting{this, &removed};
    mu_.Await(absl::Condition(
        +[](Waiting* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return std::find(w->ids->begin(), w->ids->end(), w->self->running_) == w->ids->end();
        },
        &waiting));
  }

  void SetLocks(MemoryLockProvider* locks) {
    absl::MutexLock lock(&mu_);
    locks_ = locks;
  }

  int AddConnectionListener(ConnectionListener listener) override {
    absl::MutexLock lock(&mu_);
    const int id = next_id_++;
    listeners_[id] = std::move(listener);
    notifiers_.emplace_back([this, id] {
      absl::MutexLock callback_lock(&callback_mu_);
      ConnectionListener copy;
      {
        absl::MutexLock lock(&mu_);
        auto it = listeners_.find(id);
        if (it == listeners_.end()) return;
        copy = it->second;
      }
      copy(ConnectionState::kConnected);
    });
    return id;
  }

  void RemoveConnectionListener(int id) override {
    // Waiting for callback_mu_ guarantees no call of this listener is still running.
    absl::MutexLock callback_lock(&callback_mu_);
    absl::MutexLock lock(&mu_);
    listeners_.erase(id);
  }

  absl::Status Close() override {
    std::vector<std::thread> notifiers;
    std::thread deliverer;
    MemoryLockProvider* locks = nullptr;
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
      notifiers.swap(notifiers_);
      watches_.clear();
      queue_.clear();
      locks = locks_;
      if (std::this_thread::get_id() != deliverer_.get_id()) deliverer.swap(deliverer_);
    }
    if (locks != nullptr) locks->Close();  // the service outlives Close(): destroyed before us
    for (std::thread& t : notifiers) t.join();
    if (deliverer.joinable()) deliverer.join();
    return absl::OkStatus();
  }

 private:
  absl::Status Check(absl::string_view key) {
    if (absl::EndsWith(key, "/throw")) throw std::runtime_error(absl::StrCat("thrown for ", key));
    if (key.empty() || key[0] != '/' || absl::StrContains(key, "//")) {
      return absl::InvalidArgumentError(absl::StrCat("key '", key, "' is not a valid key"));
    }
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("repository is closed");
    return absl::OkStatus();
  }

  struct WatchEntry {
    std::string key;
    DataChangedListener listener;
  };

  // Stores `value` at `key` and queues ADDED or UPDATED (nothing for an identical write).
  void Set(const std::string& key, std::string value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto [it, added] = data_.emplace(key, value);
    if (!added && it->second == value) return;
    it->second = value;
    Publish(added ? DataChangedEvent::Type::kAdded : DataChangedEvent::Type::kUpdated, key, value);
  }

  void Publish(DataChangedEvent::Type type, const std::string& key, const std::string& value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::optional<std::string> carried(value);
    if (type == DataChangedEvent::Type::kDeleted && absl::EndsWith(key, "/forgotten")) {
      carried.reset();
    }
    for (const auto& [id, watch] : watches_) {
      if (Covers(watch.key, key)) queue_.push_back({id, {type, key, carried, 0}});
    }
  }

  // The delivery thread: one event at a time, in queue order, no lock held during the call.
  void Deliver() {
    absl::MutexLock lock(&mu_);
    for (;;) {
      mu_.Await(absl::Condition(
          +[](MemoryRepository* self)
               ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->closed_ || !self->queue_.empty(); },
          this));
      if (closed_) return;
      auto [id, event] = std::move(queue_.front());
      queue_.pop_front();
      auto it = watches_.find(id);
      if (it == watches_.end()) continue;
      DataChangedListener listener = it->second.listener;
      running_ = id;
      mu_.Unlock();
      listener(event);
      mu_.Lock();
      running_ = 0;
    }
  }

  absl::Mutex callback_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Mutex mu_;
  std::map<uint64_t, WatchEntry> watches_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<uint64_t, DataChangedEvent>> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t next_watch_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t running_ ABSL_GUARDED_BY(mu_) = 0;  // watch whose listener runs now
  std::thread deliverer_;                      // started by the first Watch(), joined by Close()
  MemoryLockProvider* locks_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, std::string> data_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> ephemeral_ ABSL_GUARDED_BY(mu_);  // keys PersistEphemeral wrote last
  std::map<int, ConnectionListener> listeners_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> notifiers_ ABSL_GUARDED_BY(mu_);  // joined in Close()
  int next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

absl::StatusOr<std::unique_ptr<lock::LockProvider>> NewLocks(MemoryRepository& memory) {
  auto locks =
      std::make_unique<MemoryLockProvider>(memory, [&memory] { memory.SetLocks(nullptr); });
  memory.SetLocks(locks.get());
  return locks;
}

absl::StatusOr<MadeRepository> FromProps(const PropList& props) {
  for (const auto& [key, value] : props) {
    if (key == "fail") return absl::InvalidArgumentError(absl::StrCat("fail: '", value, "'"));
    if (key == "throw") throw std::runtime_error(value);
  }
  auto repository = std::make_unique<MemoryRepository>();
  MemoryRepository* made = repository.get();
  return MadeRepository{std::move(repository), [made] { return NewLocks(*made); }};
}

absl::StatusOr<MadeRepository> FromYaml(absl::string_view yaml, const PropList& overrides) {
  if (!absl::StrContains(yaml, "type: Memory")) {
    return absl::InvalidArgumentError("type: missing 'type: Memory' (line 1)");
  }
  return FromProps(overrides);
}

absl::StatusOr<MadeRepository> FromYamlFile(const std::string& path, const PropList& overrides) {
  return absl::UnimplementedError(absl::StrCat(path, ": files are not supported"));
}

constexpr PluginDescriptor kMemoryPlugin = {"Memory", "test", &FromYaml, &FromYamlFile, &FromProps};

}  // namespace
}  // namespace registry::plugin

extern "C" REGISTRY_PLUGIN_EXPORT int RegistryPluginInit(uint32_t host_abi_version,
                                                         RegistryPluginApi* api,
                                                         RegistryError* error) {
  return registry::plugin::InitPluginApi<registry::plugin::kMemoryPlugin>(host_abi_version, api,
                                                                          error);
}
