// SPDX-License-Identifier: Apache-2.0
// host/loader.cc
#include "host/loader.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "plugin/abi_entries.h"

namespace registry::plugin {
namespace {

std::string VersionString(uint32_t version) {
  return absl::StrCat(REGISTRY_PLUGIN_ABI_MAJOR(version), ".", REGISTRY_PLUGIN_ABI_MINOR(version));
}

std::string DlError() {
  const char* message = dlerror();
  return message != nullptr ? message : "unknown dynamic loader error";
}

// Closes a dlopen handle unless released into a PluginLibrary.
class HandleGuard {
 public:
  explicit HandleGuard(void* handle) : handle_(handle) {}
  ~HandleGuard() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  HandleGuard(const HandleGuard&) = delete;
  HandleGuard& operator=(const HandleGuard&) = delete;
  void* get() const { return handle_; }
  void* Release() {
    void* handle = handle_;
    handle_ = nullptr;
    return handle;
  }

 private:
  void* handle_;
};

// Checks what LoadPluginFile guarantees about a table the plugin reported as filled.
absl::Status ValidateTable(const std::string& path, uint32_t host_abi_version,
                           const RegistryPluginApi& api) {
  const uint32_t got = api.abi_version;
  if (REGISTRY_PLUGIN_ABI_MAJOR(got) != REGISTRY_PLUGIN_ABI_MAJOR(host_abi_version) ||
      REGISTRY_PLUGIN_ABI_MAJOR(got) != REGISTRY_PLUGIN_ABI_VERSION_MAJOR ||
      REGISTRY_PLUGIN_ABI_MINOR(got) > REGISTRY_PLUGIN_ABI_MINOR(host_abi_version)) {
    return absl::FailedPreconditionError(
        absl::StrCat("registry plugin ", path, " negotiated ABI ", VersionString(got),
                     ", which host ABI ", VersionString(host_abi_version), " cannot use"));
  }
  const uint32_t minor = REGISTRY_PLUGIN_ABI_MINOR(got);
  size_t needed = REGISTRY_PLUGIN_API_SIZE_1_0;
  bool complete = api.release_error != nullptr;
  // Every entry of the negotiated minor and below: present (within struct_size) and non-NULL.
#define REGISTRY_CHECK(entry_minor, member, value)                                       \
  if (internal::MinorIncludes(minor, entry_minor)) {                                     \
    needed = std::max(needed, offsetof(RegistryPluginApi, member) + sizeof(api.member)); \
    complete = complete && api.member != nullptr;                                        \
  }
  REGISTRY_PLUGIN_API_ENTRIES(REGISTRY_CHECK)
#undef REGISTRY_CHECK
  complete = complete && api.struct_size >= needed;
  if (!complete) {
    return absl::FailedPreconditionError(absl::StrCat(
        "registry plugin ", path, " returned an incomplete ABI ", VersionString(got), " table (",
        api.struct_size, " bytes, at least ", needed, " needed, every entry non-NULL)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> PluginFileNameForType(absl::string_view type) {
  const bool valid = !type.empty() && std::all_of(type.begin(), type.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repository type '", type, "' is not a plugin name (letters, digits, '_' and '-' only)"));
  }
  return absl::StrCat("libregistry_", absl::AsciiStrToLower(type), ".so");
}

std::vector<std::string> DefaultPluginSearchPath() {
  std::vector<std::string> dirs;
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0) {
    std::string path(exe, static_cast<size_t>(len));
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos) {
      dirs.push_back(absl::StrCat(path.substr(0, slash), "/../lib"));
#ifdef REGISTRY_PLUGIN_INSTALL_LIBDIR
      // An installed tool's plugin is in the prefix's library directory, which GNUInstallDirs
      // may name otherwise (lib/x86_64-linux-gnu under /usr on Debian; cmake/install.cmake).
      if (absl::string_view(REGISTRY_PLUGIN_INSTALL_LIBDIR) != "lib") {
        dirs.push_back(absl::StrCat(path.substr(0, slash), "/../", REGISTRY_PLUGIN_INSTALL_LIBDIR));
      }
#endif
    }
  }
  if (const char* env = std::getenv(kPluginPathEnv); env != nullptr) {
    for (absl::string_view dir : absl::StrSplit(env, ':', absl::SkipEmpty())) {
      dirs.emplace_back(dir);
    }
  }
  return dirs;
}

absl::StatusOr<std::shared_ptr<PluginLibrary>> LoadPluginFile(const std::string& path,
                                                              uint32_t host_abi_version) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat("registry plugin ", path, " cannot be opened: ", std::strerror(errno)));
  }
  // RTLD_NODELETE: dlclose() never unmaps the plugin. Its static state (singletons of the
  // libraries linked into it, thread-local destructors, libcurl's global init) must outlive
  // every thread it started, and unmapping it would turn that state into leaks.
  HandleGuard handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (handle.get() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("registry plugin ", path, " cannot be loaded: ", DlError()));
  }
  dlerror();  // clear any stale error before telling a NULL symbol from a failed lookup
  auto init =
      reinterpret_cast<RegistryPluginInitFunc>(dlsym(handle.get(), REGISTRY_PLUGIN_INIT_SYMBOL));
  if (init == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("registry plugin ", path, " does not export the symbol ",
                     REGISTRY_PLUGIN_INIT_SYMBOL, ": ", DlError()));
  }
  RegistryPluginApi api{};
  api.struct_size = sizeof(RegistryPluginApi);
  RegistryError error{};
  const int code = init(host_abi_version, &api, &error);
  if (code != REGISTRY_OK) {
    absl::Status status = TakeStatus(api, code, &error);
    return absl::FailedPreconditionError(
        absl::StrCat("registry plugin ", path, " rejected host ABI ",
                     VersionString(host_abi_version), ": ", status.ToString()));
  }
  if (api.release_error != nullptr) api.release_error(&error);
  RETURN_IF_ERROR(ValidateTable(path, host_abi_version, api));
  return std::make_shared<PluginLibrary>(handle.Release(), path, api);
}

absl::StatusOr<std::shared_ptr<PluginLibrary>> LoadPluginForType(
    absl::string_view type, const std::vector<std::string>& search_path,
    uint32_t host_abi_version) {
  ASSIGN_OR_RETURN(std::string file, PluginFileNameForType(type));
  for (const std::string& dir : search_path) {
    std::string path = absl::StrCat(dir, "/", file);
    if (access(path.c_str(), F_OK) != 0) continue;
    ASSIGN_OR_RETURN(std::shared_ptr<PluginLibrary> library,
                     LoadPluginFile(path, host_abi_version));
    if (!absl::EqualsIgnoreCase(library->repository_type(), type)) {
      return absl::FailedPreconditionError(absl::StrCat("registry plugin ", path, " serves type '",
                                                        library->repository_type(), "', not '",
                                                        type, "'"));
    }
    return library;
  }
  return absl::NotFoundError(absl::StrCat("no registry plugin for type '", type, "': ", file,
                                          " is in none of [", absl::StrJoin(search_path, ", "),
                                          "] (add its directory to ", kPluginPathEnv, ")"));
}

}  // namespace registry::plugin
