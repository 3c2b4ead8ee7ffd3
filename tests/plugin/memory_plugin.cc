// tests/plugin/memory_plugin.cc
//
// libregistry_memory.so: a test plugin serving `type: Memory` through the same ABI adapter as
// the Consul plugin, over an in-process map. It lets the loader, the adapter and the C++ wrapper
// be tested without a server. Test hooks:
//   - a key whose last segment is "throw" makes every call on it throw std::runtime_error;
//   - a prop or override "fail" = "<message>" makes creation fail with InvalidArgument;
//   - every connection listener is told CONNECTED once, from a background thread.
#include <map>
#include <memory>
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

namespace registry::plugin {
namespace {

class MemoryRepository final : public Repository {
 public:
  ~MemoryRepository() override { (void)Close(); }

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
    absl::MutexLock lock(&mu_);
    data_[std::string(key)] = std::string(value);
    return absl::OkStatus();
  }

  absl::Status Update(absl::string_view key, absl::string_view value) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    auto it = data_.find(std::string(key));
    if (it == data_.end()) return absl::NotFoundError(absl::StrCat("update: key '", key, "'"));
    it->second = std::string(value);
    return absl::OkStatus();
  }

  absl::Status Delete(absl::string_view key) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    const std::string prefix = key == "/" ? "/" : absl::StrCat(key, "/");
    absl::MutexLock lock(&mu_);
    data_.erase(std::string(key));
    for (auto it = data_.lower_bound(prefix);
         it != data_.end() && absl::StartsWith(it->first, prefix);) {
      it = data_.erase(it);
    }
    return absl::OkStatus();
  }

  absl::Status PersistEphemeral(absl::string_view key, absl::string_view value) override {
    return Persist(key, value);
  }

  absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view key,
                                                 absl::string_view value) override {
    if (absl::Status s = Check(key); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    return data_.emplace(std::string(key), std::string(value)).second;
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
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
      notifiers.swap(notifiers_);
    }
    for (std::thread& t : notifiers) t.join();
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

  absl::Mutex callback_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Mutex mu_;
  std::map<std::string, std::string> data_ ABSL_GUARDED_BY(mu_);
  std::map<int, ConnectionListener> listeners_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> notifiers_ ABSL_GUARDED_BY(mu_);  // joined in Close()
  int next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

absl::StatusOr<std::unique_ptr<Repository>> FromProps(const PropList& props) {
  for (const auto& [key, value] : props) {
    if (key == "fail") return absl::InvalidArgumentError(absl::StrCat("fail: '", value, "'"));
    if (key == "throw") throw std::runtime_error(value);
  }
  return std::make_unique<MemoryRepository>();
}

absl::StatusOr<std::unique_ptr<Repository>> FromYaml(absl::string_view yaml,
                                                     const PropList& overrides) {
  if (!absl::StrContains(yaml, "type: Memory")) {
    return absl::InvalidArgumentError("type: missing 'type: Memory' (line 1)");
  }
  return FromProps(overrides);
}

absl::StatusOr<std::unique_ptr<Repository>> FromYamlFile(const std::string& path,
                                                         const PropList& overrides) {
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
