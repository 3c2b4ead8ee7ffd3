// SPDX-License-Identifier: Apache-2.0
// host/plugin_entries.h
//
// Whether a C++ host may call an entry of the function table it negotiated with a plugin, and
// the error when it may not. Internal to the loader library (plugin_library.cc,
// plugin_client.cc); not installed.
//
// Thread safety: pure.
#ifndef REGISTRY_HOST_PLUGIN_ENTRIES_H_
#define REGISTRY_HOST_PLUGIN_ENTRIES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "plugin/registry_plugin.h"

// True when the negotiated table `api` has `member`, added in minor `minor`, and it is set.
#define REGISTRY_ENTRY_USABLE(api, minor, member)             \
  (REGISTRY_PLUGIN_ABI_MINOR((api).abi_version) >= (minor) && \
   REGISTRY_PLUGIN_API_HAS(&(api), member) && (api).member != nullptr)

namespace registry::plugin {

// Unimplemented: the plugin at `path` negotiated `abi_version`, below the minor that added `what`.
absl::Status MissingEntries(absl::string_view path, uint32_t abi_version, const char* what,
                            uint32_t minor);

}  // namespace registry::plugin

#endif  // REGISTRY_HOST_PLUGIN_ENTRIES_H_
