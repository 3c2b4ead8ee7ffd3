// SPDX-License-Identifier: Apache-2.0
// conf/registry_config.cc
//
// The config itself and the two non-YAML entry points (props map, override); the YAML reader
// is in registry_yaml.cc.
#include "conf/registry_config.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "conf/props.h"

namespace registry::conf {

std::string RegistryConfig::ToString() const {
  return absl::StrCat("{type: ", repository_type, ", overwrite: ", overwrite ? "true" : "false",
                      ", namespace: ", namespace_name, ", servers: [", absl::StrJoin(servers, ", "),
                      "], ttl: ", absl::FormatDuration(session_ttl),
                      ", block_query_wait: ", absl::FormatDuration(block_query_wait),
                      ", token: ", token.empty() ? "<none>" : "<set>",
                      ", datacenter: ", datacenter.empty() ? "<agent's>" : datacenter,
                      ", session_node: ", session_node.empty() ? "<agent's>" : session_node,
                      ", tls_ca_file: ", tls_ca_file.empty() ? "<system>" : tls_ca_file,
                      ", tls_verify: ", tls_verify ? "true" : "false",
                      ", tls_cert_file: ", tls_cert_file.empty() ? "<none>" : tls_cert_file,
                      ", tls_key_file: ", tls_key_file.empty() ? "<none>" : tls_key_file,
                      ", tls_server_name: ", tls_server_name.empty() ? "<host>" : tls_server_name,
                      ", connect_timeout: ", absl::FormatDuration(connect_timeout),
                      ", request_timeout: ", absl::FormatDuration(request_timeout),
                      ", session_lock_delay: ", absl::FormatDuration(session_lock_delay),
                      ", lock_retry: ", absl::FormatDuration(lock_retry), ", log_level: ",
                      log_level.has_value() ? LogLevelName(*log_level) : "<unchanged>",
                      ", txn_max_operations: ", txn_max_operations,
                      ", watch_max_connections: ", watch_max_connections, "}");
}

std::ostream& operator<<(std::ostream& out, const RegistryConfig& config) {
  return out << config.ToString();
}

bool IsConsulType(absl::string_view type) { return absl::EqualsIgnoreCase(type, "Consul"); }

absl::StatusOr<RegistryConfig> ParseRegistryProps(
    const std::vector<std::pair<std::string, std::string>>& props) {
  RegistryConfig start;
  start.repository_type = "Consul";
  PropsBuilder builder(std::move(start), /*base_dir=*/"", PropsBuilder::Keys::kPropsAndModeKeys);
  for (const auto& [key, value] : props) RETURN_IF_ERROR(builder.Set(key, value, ""));
  return std::move(builder).Finish("");
}

const std::vector<std::string>& RepositoryPropKeys() {
  static const PropsBuilder* const kBuilder =
      new PropsBuilder(RegistryConfig{}, /*base_dir=*/"", PropsBuilder::Keys::kProps);
  return kBuilder->KnownKeys();
}

absl::Status ApplyOverride(RegistryConfig* config, absl::string_view prop_key,
                           absl::string_view value) {
  PropsBuilder builder(*config, /*base_dir=*/"", PropsBuilder::Keys::kPropsAndModeKeys);
  RETURN_IF_ERROR(builder.Set(prop_key, value, ""));
  ASSIGN_OR_RETURN(*config, std::move(builder).Finish(""));
  return absl::OkStatus();
}

}  // namespace registry::conf
