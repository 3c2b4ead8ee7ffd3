// SPDX-License-Identifier: Apache-2.0
// plugin/java/native/bridge_repository.cc
#include "plugin/java/native/bridge_repository.h"

#include <dlfcn.h>

#include <filesystem>
#include <utility>

#include "base/status_macros.h"
#include "host/loader.h"

namespace registry::java {
namespace {

constexpr char kPluginType[] = "Consul";

// The directory this glue library was loaded from ("" if the dynamic linker cannot say).
std::string OwnDirectory() {
  Dl_info info{};
  static const int kAnchor = 0;
  if (dladdr(&kAnchor, &info) == 0 || info.dli_fname == nullptr) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

absl::StatusOr<std::shared_ptr<plugin::PluginLibrary>> LoadOnce(
    const std::vector<std::string>& extra_dirs) {
  static absl::Mutex mu(absl::kConstInit);
  static std::shared_ptr<plugin::PluginLibrary>* loaded = nullptr;
  absl::MutexLock lock(&mu);
  if (loaded != nullptr) return *loaded;
  std::vector<std::string> path;
  if (std::string own = OwnDirectory(); !own.empty()) path.push_back(own);
  path.insert(path.end(), extra_dirs.begin(), extra_dirs.end());
  for (std::string& dir : plugin::DefaultPluginSearchPath()) path.push_back(std::move(dir));
  ASSIGN_OR_RETURN(std::shared_ptr<plugin::PluginLibrary> library,
                   plugin::LoadPluginForType(kPluginType, path));
  // Kept for the process's life: the plugin stays mapped anyway (RTLD_NODELETE), and its log
  // sink and metrics are per process.
  loaded = new std::shared_ptr<plugin::PluginLibrary>(std::move(library));
  return *loaded;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BridgeRepository>> BridgeRepository::Open(
    const plugin::PropList& props, const std::vector<std::string>& extra_dirs) {
  ASSIGN_OR_RETURN(std::shared_ptr<plugin::PluginLibrary> library, LoadOnce(extra_dirs));
  ASSIGN_OR_RETURN(std::unique_ptr<plugin::PluginRepository> repository,
                   library->CreateFromProps(props));
  return std::unique_ptr<BridgeRepository>(new BridgeRepository(std::move(repository)));
}

BridgeRepository::~BridgeRepository() {
  absl::MutexLock lock(&mu_);
  locks_.clear();
}

absl::StatusOr<plugin::PluginLock*> BridgeRepository::Lock(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = locks_.find(name);
  if (it != locks_.end()) return it->second.get();
  ASSIGN_OR_RETURN(std::unique_ptr<plugin::PluginLock> made, repository_->GetLock(name));
  return locks_.emplace(std::string(name), std::move(made)).first->second.get();
}

}  // namespace registry::java
