// SPDX-License-Identifier: Apache-2.0
// packaging/consumer/cpp_host.cc: a C++ host of the installed plugin, through the loader and the
// C++ wrapper.
//
//   cpp_host HOST:PORT
//
// Finds the plugin for type "Consul" in the package's library directory (PLUGIN_DIR) and then the
// default search path, and puts, gets and deletes one key on the server at HOST:PORT. Exits 0
// when every step gives what it must.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "host/loader.h"
#include "host/plugin_client.h"

namespace {

int Fail(const char* step, const absl::Status& status) {
  std::fprintf(stderr, "cpp_host: %s failed: %s\n", step, status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
    return 2;
  }
  namespace plugin = registry::plugin;
  std::vector<std::string> search_path = {PLUGIN_DIR};
  for (std::string& dir : plugin::DefaultPluginSearchPath()) search_path.push_back(dir);
  auto library = plugin::LoadPluginForType("Consul", search_path);
  if (!library.ok()) return Fail("LoadPluginForType", library.status());
  auto repository =
      (*library)->CreateFromProps({{"namespace", "package_test_cpp"}, {"server-lists", argv[1]}});
  if (!repository.ok()) return Fail("CreateFromProps", repository.status());
  plugin::PluginRepository& repo = **repository;

  if (absl::Status s = repo.Persist("/metadata/db", "cpp-value"); !s.ok())
    return Fail("Persist", s);
  absl::StatusOr<std::optional<std::string>> value = repo.Get("/metadata/db");
  if (!value.ok()) return Fail("Get", value.status());
  if (*value != std::optional<std::string>("cpp-value")) {
    std::fprintf(stderr, "cpp_host: Get did not read back what Persist wrote\n");
    return 1;
  }
  if (absl::Status s = repo.Delete("/metadata/db"); !s.ok()) return Fail("Delete", s);
  value = repo.Get("/metadata/db");
  if (!value.ok()) return Fail("Get after Delete", value.status());
  if (value->has_value()) {
    std::fprintf(stderr, "cpp_host: the key is still there after Delete\n");
    return 1;
  }
  if (absl::Status s = repo.Close(); !s.ok()) return Fail("Close", s);
  std::printf("cpp_host: put/get/delete through the loader (ABI %u.%u, plugin %s at %s): ok\n",
              REGISTRY_PLUGIN_ABI_MAJOR((*library)->abi_version()),
              REGISTRY_PLUGIN_ABI_MINOR((*library)->abi_version()),
              std::string((*library)->plugin_version()).c_str(), (*library)->path().c_str());
  return 0;
}
