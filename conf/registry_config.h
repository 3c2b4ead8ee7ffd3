// SPDX-License-Identifier: Apache-2.0
// conf/registry_config.h
//
// The registry YAML of the middleware, turned into a typed and validated RegistryConfig.
// Accepted input (see conf/README.md for every prop, its default and an example):
//
//   mode:                       # ShardingSphere's block, unchanged; or a file whose
//     type: Cluster             # top-level key is `repository:` alone
//     overwrite: false
//     repository:
//       type: Consul
//       props:
//         namespace: governance_ds
//         server-lists: 127.0.0.1:8500
//         timeToLiveSeconds: 30s
//
// Every error is an absl::Status (no exception escapes) whose message names the key, the bad
// value and, for YAML input, the line: "timeToLiveSeconds: '3x' is not a duration (line 7)".
// The token is never part of an error message or of ToString().
//
// Thread safety: all functions are thread-compatible; they share no state.
#ifndef REGISTRY_CONF_REGISTRY_CONFIG_H_
#define REGISTRY_CONF_REGISTRY_CONFIG_H_

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/limits.h"
#include "base/log.h"

namespace registry::conf {

// A validated configuration: every value returned by the functions below satisfies the
// comments on its fields. Defaults are those of a config that omits the prop.
struct RegistryConfig {
  std::string repository_type;  // as written, e.g. "Consul"; see IsConsulType()
  bool overwrite = false;       // mode.overwrite
  // '/'-separated segments of letters, digits, '-', '_', '.'; no '/' at either end. Required.
  std::string namespace_name;
  // From server-lists: non-empty, each "host:port" or "http(s)://host:port", trimmed, no repeats.
  std::vector<std::string> servers;
  // The time settings: defaults and limits are base/limits.h's, whole milliseconds.
  absl::Duration session_ttl = limits::kDefaultSessionTtl;           // (0, 24h]
  absl::Duration block_query_wait = limits::kDefaultBlockQueryWait;  // (0, 10m]
  std::string token;       // ACL token, printable ASCII without spaces, or empty. Never printed.
  std::string datacenter;  // empty: the agent's datacenter
  // The catalog node of the instance sessions (repository/session_node.h); empty: the agent's.
  std::string session_node = std::string(limits::kDefaultSessionNode);
  std::string tls_ca_file;  // empty: the system CA store
  bool tls_verify = true;   // verify the server certificate
  // Client certificate and its key (PEM), both set or both empty; empty: no client certificate.
  std::string tls_cert_file;
  std::string tls_key_file;
  // A DNS name the server certificate is verified against (and sent as SNI) instead of the
  // host of each https:// server; empty: the host. TLS props require an https:// server.
  std::string tls_server_name;
  absl::Duration connect_timeout = limits::kDefaultConnectTimeout;  // (0, 24h]
  absl::Duration request_timeout = limits::kDefaultRequestTimeout;  // (0, 24h], non-blocking calls
  absl::Duration session_lock_delay = limits::kDefaultLockDelay;    // [0, 60s]
  absl::Duration lock_retry = limits::kDefaultLockRetry;            // (0, 60s], at most session_ttl
  // The level of the plugin's stderr log (base/log.h) from this config on; unset: unchanged
  // (warn unless set before). A host's log sink keeps its own level.
  std::optional<LogLevel> log_level;
  // Operations per store transaction the servers accept (persist batches take one per key):
  // 64 for Consul up to 1.13, 128 later. [1, 128].
  int txn_max_operations = limits::kDefaultTxnOperations;
  // Blocking queries one watch of a big tree may hold: [1, 180]; 1 never splits a watch.
  int watch_max_connections = limits::kDefaultWatchQueries;

  // Returns a one-line description of every field for logs; the token shows only as
  // "<set>" or "<none>".
  std::string ToString() const;
};

// Writes config.ToString(); keeps the token out of test failure output too.
std::ostream& operator<<(std::ostream& out, const RegistryConfig& config);

// Returns true iff `type` names the Consul repository ("Consul", "consul", "CONSUL", ...).
bool IsConsulType(absl::string_view type);

// Parses registry YAML text holding either a `mode:` block or a `repository:` block. Other
// top-level keys belong to the host and are ignored; inside mode/repository/props every key is
// known or an error. Relative tokenFile and TLS file paths are taken from the working directory.
// Errors: InvalidArgument naming the key, the value and the line; NotFound/PermissionDenied if
// tokenFile or a TLS file (tlsCaFile, tlsCertFile, tlsKeyFile) cannot be read.
absl::StatusOr<RegistryConfig> ParseRegistryYaml(absl::string_view yaml_text);

// Reads and parses the YAML file at `path`. Relative tokenFile and TLS file paths are taken
// from the directory of `path`. Every error message starts with "<path>: ". Errors: as
// ParseRegistryYaml, plus NotFound/PermissionDenied/InvalidArgument if `path` cannot be read.
absl::StatusOr<RegistryConfig> LoadRegistryYamlFile(const std::string& path);

// Builds a config from the repository props alone (what a C ABI passes as a key/value map),
// with the same keys, defaults and validation as the YAML `props:` block, plus the optional
// keys "type" (repository type, default "Consul") and "overwrite". Errors name the key and the
// value, without a line.
absl::StatusOr<RegistryConfig> ParseRegistryProps(
    const std::vector<std::pair<std::string, std::string>>& props);

// The keys of the YAML `props:` block, as ParseRegistryYaml and ParseRegistryProps accept them
// (a host that receives props meant for several repositories keeps only these).
const std::vector<std::string>& RepositoryPropKeys();

// Replaces one setting of a valid `*config` as if `prop_key` had been written in props with
// `value` (e.g. a CLI flag "server-lists" or "token"), with the same validation. On error
// `*config` is unchanged. Setting "token" or "tokenFile" replaces the token from either source.
// Errors: InvalidArgument naming the key and the value.
absl::Status ApplyOverride(RegistryConfig* config, absl::string_view prop_key,
                           absl::string_view value);

}  // namespace registry::conf

#endif  // REGISTRY_CONF_REGISTRY_CONFIG_H_
