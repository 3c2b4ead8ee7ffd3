// SPDX-License-Identifier: Apache-2.0
// plugin/plugin_entry.cc
//
// The Consul registry plugin: libregistry_consul.so. Its only exported symbol is
// RegistryPluginInit; the table it fills turns registry YAML or props into a RegistryConfig
// (conf/), the config into ConsulRepositoryOptions, and serves the C calls through
// registry::Repository (abi_adapter.h) and, for locks, the repository's lock::LockManager.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "conf/registry_config.h"
#include "instance/instance.h"
#include "lock/consul_semaphore.h"
#include "lock/lock_manager.h"
#include "plugin/abi_adapter.h"
#include "plugin/registry_plugin.h"
#include "registry_version.h"
#include "repository/consul_repository.h"

namespace registry::plugin {
namespace {

// The C ABI promises hosts the semaphore limits the lock layer takes.
static_assert(REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX == lock::kMaxSemaphoreLimit);

constexpr char kRepositoryType[] = "Consul";
constexpr char kPluginVersion[] = REGISTRY_CONSUL_VERSION;  // project(VERSION), generated

absl::StatusOr<MadeRepository> NewRepository(const conf::RegistryConfig& config) {
  if (!conf::IsConsulType(config.repository_type)) {
    return absl::InvalidArgumentError(absl::StrCat("type: '", config.repository_type,
                                                   "' is not served by the ", kRepositoryType,
                                                   " registry plugin"));
  }
  ConsulRepositoryOptions options;
  options.client.servers = absl::StrJoin(config.servers, ",");
  options.client.token = config.token;
  options.client.datacenter = config.datacenter;
  options.client.verify_tls = config.tls_verify;
  options.client.ca_file = config.tls_ca_file;
  options.client.cert_file = config.tls_cert_file;
  options.client.key_file = config.tls_key_file;
  options.client.server_name = config.tls_server_name;
  options.client.connect_timeout = config.connect_timeout;
  options.client.request_timeout = config.request_timeout;
  options.namespace_name = config.namespace_name;
  options.session_ttl = config.session_ttl;
  options.session_lock_delay = config.session_lock_delay;
  options.session_node = config.session_node;
  options.block_query_wait = config.block_query_wait;
  options.lock_retry = config.lock_retry;
  options.txn_max_operations = config.txn_max_operations;
  options.watch_max_connections = config.watch_max_connections;
  if (config.log_level.has_value()) SetStderrLogLevel(*config.log_level);
  ASSIGN_OR_RETURN(ConsulInstance instance, NewConsulInstance(std::move(options)));
  // The parts stay valid while the repository lives, and its locks go before it (MadeRepository).
  return MadeRepository{
      std::move(instance.repository),
      [locks = instance.locks]() -> absl::StatusOr<std::unique_ptr<lock::LockProvider>> {
        return lock::LockManager::Create(locks);
      }};
}

absl::Status ApplyOverrides(const PropList& overrides, conf::RegistryConfig* config) {
  for (const auto& [key, value] : overrides) {
    RETURN_IF_ERROR(conf::ApplyOverride(config, key, value));
  }
  return absl::OkStatus();
}

absl::StatusOr<MadeRepository> FromYaml(absl::string_view yaml, const PropList& overrides) {
  ASSIGN_OR_RETURN(conf::RegistryConfig config, conf::ParseRegistryYaml(yaml));
  RETURN_IF_ERROR(ApplyOverrides(overrides, &config));
  return NewRepository(config);
}

absl::StatusOr<MadeRepository> FromYamlFile(const std::string& path, const PropList& overrides) {
  ASSIGN_OR_RETURN(conf::RegistryConfig config, conf::LoadRegistryYamlFile(path));
  RETURN_IF_ERROR(ApplyOverrides(overrides, &config));
  return NewRepository(config);
}

absl::StatusOr<MadeRepository> FromProps(const PropList& props) {
  ASSIGN_OR_RETURN(conf::RegistryConfig config, conf::ParseRegistryProps(props));
  return NewRepository(config);
}

constexpr PluginDescriptor kConsulPlugin = {kRepositoryType, kPluginVersion, &FromYaml,
                                            &FromYamlFile, &FromProps};

}  // namespace
}  // namespace registry::plugin

extern "C" REGISTRY_PLUGIN_EXPORT int RegistryPluginInit(uint32_t host_abi_version,
                                                         RegistryPluginApi* api,
                                                         RegistryError* error) {
  try {
    registry::MakeInstanceMetrics();  // a scrape lists every family from the load on
  } catch (...) {
    // Out of memory: the families are made on their first use instead.
  }
  return registry::plugin::InitPluginApi<registry::plugin::kConsulPlugin>(host_abi_version, api,
                                                                          error);
}
