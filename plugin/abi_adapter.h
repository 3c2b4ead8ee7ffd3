// SPDX-License-Identifier: Apache-2.0
// plugin/abi_adapter.h
//
// The plugin side of the C ABI (plugin/registry_plugin.h): maps the C table onto
// registry::Repository (and, for locks, a lock::LockProvider, whose locks are
// registry::lock::DistributedLock, lock/distributed_lock.h). A plugin library
// supplies a PluginDescriptor (its type name, how it builds a repository from YAML or props, and
// optionally its locks) and implements its exported RegistryPluginInit with
// InitPluginApi<descriptor>; every other table entry is generic and lives here (abi_adapter.cc,
// abi_watch.cc, abi_lock.cc).
//
// Guarantees for every table entry: no C++ exception escapes (std::bad_alloc becomes
// REGISTRY_RESOURCE_EXHAUSTED, any other exception REGISTRY_INTERNAL with its what()); an
// absl::Status keeps its code and message; NULL pointers where a value is required are
// REGISTRY_INVALID_ARGUMENT naming the parameter. Internal to plugins: hosts never include it.
//
// Thread safety: as registry_plugin.h states for the table.
#ifndef REGISTRY_PLUGIN_ABI_ADAPTER_H_
#define REGISTRY_PLUGIN_ABI_ADAPTER_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lock/distributed_lock.h"
#include "lock/lock_provider.h"
#include "plugin/registry_plugin.h"
#include "registry/repository.h"

namespace registry::plugin {

// Props as written under `props:`, in the order given.
using PropList = std::vector<std::pair<std::string, std::string>>;

// A repository a plugin made, and how to make its locks: the maker (the composition root) keeps
// what the locks are built from, so they get it without a cast.
struct MadeRepository {
  std::unique_ptr<Repository> repository;
  // Makes the locks of `repository` (lock/lock_provider.h: kinds a provider lacks fail with
  // Unimplemented naming them), on its first get_lock; they are destroyed before the
  // repository. Null: the plugin has no locks (get_lock fails with Unimplemented).
  std::function<absl::StatusOr<std::unique_ptr<lock::LockProvider>>()> new_lock_provider;
};

struct PluginDescriptor {
  const char* repository_type;  // static, e.g. "Consul"
  const char* plugin_version;   // static, e.g. "0.1.0"
  // Build a repository from YAML text / a YAML file with `overrides` applied, or from props.
  absl::StatusOr<MadeRepository> (*from_yaml)(absl::string_view yaml, const PropList& overrides);
  absl::StatusOr<MadeRepository> (*from_yaml_file)(const std::string& path,
                                                   const PropList& overrides);
  absl::StatusOr<MadeRepository> (*from_props)(const PropList& props);
};

// Stores `status` in `error` (when non-NULL and not already filled) and returns its code.
int ReportStatus(const absl::Status& status, RegistryError* error) noexcept;

namespace internal {

using CreateFromYamlFn = decltype(RegistryPluginApi::create_from_yaml);
using CreateFromYamlFileFn = decltype(RegistryPluginApi::create_from_yaml_file);
using CreateFromPropsFn = decltype(RegistryPluginApi::create_from_props);

int CreateFromYaml(const PluginDescriptor& descriptor, const char* yaml, size_t yaml_len,
                   const char* const* override_keys, const char* const* override_values,
                   size_t override_count, RegistryRepository** out, RegistryError* error) noexcept;
int CreateFromYamlFile(const PluginDescriptor& descriptor, const char* path,
                       const char* const* override_keys, const char* const* override_values,
                       size_t override_count, RegistryRepository** out,
                       RegistryError* error) noexcept;
int CreateFromProps(const PluginDescriptor& descriptor, const char* const* keys,
                    const char* const* values, size_t count, RegistryRepository** out,
                    RegistryError* error) noexcept;

int FillApi(const PluginDescriptor& descriptor, uint32_t host_abi_version, RegistryPluginApi* api,
            RegistryError* error, CreateFromYamlFn from_yaml, CreateFromYamlFileFn from_yaml_file,
            CreateFromPropsFn from_props) noexcept;

}  // namespace internal

// Implements RegistryPluginInit (see registry_plugin.h) for the plugin described by
// `kDescriptor`, which must have static storage duration. The table's create entries are
// instantiated per descriptor, so no global state is needed.
template <const PluginDescriptor& kDescriptor>
int InitPluginApi(uint32_t host_abi_version, RegistryPluginApi* api,
                  RegistryError* error) noexcept {
  struct Entries {
    static int FromYaml(const char* yaml, size_t yaml_len, const char* const* override_keys,
                        const char* const* override_values, size_t override_count,
                        RegistryRepository** out, RegistryError* error) noexcept {
      return internal::CreateFromYaml(kDescriptor, yaml, yaml_len, override_keys, override_values,
                                      override_count, out, error);
    }
    static int FromYamlFile(const char* path, const char* const* override_keys,
                            const char* const* override_values, size_t override_count,
                            RegistryRepository** out, RegistryError* error) noexcept {
      return internal::CreateFromYamlFile(kDescriptor, path, override_keys, override_values,
                                          override_count, out, error);
    }
    static int FromProps(const char* const* keys, const char* const* values, size_t count,
                         RegistryRepository** out, RegistryError* error) noexcept {
      return internal::CreateFromProps(kDescriptor, keys, values, count, out, error);
    }
  };
  return internal::FillApi(kDescriptor, host_abi_version, api, error, &Entries::FromYaml,
                           &Entries::FromYamlFile, &Entries::FromProps);
}

}  // namespace registry::plugin

#endif  // REGISTRY_PLUGIN_ABI_ADAPTER_H_
