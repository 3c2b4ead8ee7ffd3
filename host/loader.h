// SPDX-License-Identifier: Apache-2.0
// host/loader.h
//
// Host-side plugin loader: finds the shared library serving a repository `type:` in a search
// path, dlopen()s it (RTLD_NOW | RTLD_LOCAL, so its symbols never mix with the host's; plus
// RTLD_NODELETE, so a loaded plugin stays mapped until the process exits), looks up
// RegistryPluginInit and negotiates the ABI version (see plugin/registry_plugin.h).
//
// Thread safety: every function may be called concurrently.
#ifndef REGISTRY_HOST_LOADER_H_
#define REGISTRY_HOST_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "host/plugin_client.h"
#include "plugin/registry_plugin.h"

namespace registry::plugin {

// Colon-separated directories searched after the default one.
inline constexpr char kPluginPathEnv[] = "REGISTRY_PLUGIN_PATH";

// Returns the file name of the plugin serving `type`, case-insensitively: "Consul" and "consul"
// both give "libregistry_consul.so". Errors: InvalidArgument naming `type` unless it is
// non-empty and made of letters, digits, '_' and '-' (so it can never name a path).
absl::StatusOr<std::string> PluginFileNameForType(absl::string_view type);

// Returns the default search path: "<directory of the running executable>/../lib", then (when
// the build installs libraries elsewhere, e.g. lib/x86_64-linux-gnu) "<that directory>/../<the
// install library directory>", then every non-empty entry of $REGISTRY_PLUGIN_PATH in order.
std::vector<std::string> DefaultPluginSearchPath();

// Loads the plugin file at `path` and negotiates `host_abi_version` (a host passes its header's
// REGISTRY_PLUGIN_ABI_VERSION_CURRENT; tests may pass others). Guarantees on success: the
// negotiated major equals this header's and the host's, the minor is at most the host's (and
// lower when the plugin is older), and every entry of every minor up to the negotiated one is
// present and non-NULL. Errors (each message names `path`):
//   NotFound           the file does not exist;
//   FailedPrecondition dlopen failed (with dlerror()), the file lacks the RegistryPluginInit
//                      symbol, or the plugin cannot speak the host's version (message names both
//                      versions and carries the plugin's own message), or returned a bad table.
absl::StatusOr<std::shared_ptr<PluginLibrary>> LoadPluginFile(
    const std::string& path, uint32_t host_abi_version = REGISTRY_PLUGIN_ABI_VERSION_CURRENT);

// Finds PluginFileNameForType(type) in the first directory of `search_path` holding it, loads it
// with LoadPluginFile and checks that the plugin reports serving `type` (case-insensitively).
// Errors: as PluginFileNameForType and LoadPluginFile; NotFound naming the file and every
// directory searched when no directory holds it; FailedPrecondition if the plugin serves
// another type.
absl::StatusOr<std::shared_ptr<PluginLibrary>> LoadPluginForType(
    absl::string_view type, const std::vector<std::string>& search_path,
    uint32_t host_abi_version = REGISTRY_PLUGIN_ABI_VERSION_CURRENT);

}  // namespace registry::plugin

#endif  // REGISTRY_HOST_LOADER_H_
