// SPDX-License-Identifier: Apache-2.0
// tools/ctl_env.h
//
// Consul's CLI conventions for registryctl: the environment every Consul tool reads
// (CONSUL_HTTP_ADDR, CONSUL_HTTP_SSL, CONSUL_HTTP_TOKEN, CONSUL_HTTP_TOKEN_FILE, CONSUL_CACERT,
// CONSUL_CAPATH, CONSUL_CLIENT_CERT, CONSUL_CLIENT_KEY, CONSUL_TLS_SERVER_NAME,
// CONSUL_HTTP_SSL_VERIFY), mapped onto the Consul plugin's props, and the order in which the
// sources of a prop win: flags, then the --config file, then the environment, then the defaults.
//
// A variable a higher source overrides is not read (nor checked); the TLS variables are read only
// when a server of the resolved server-lists uses https://, as Consul's client ignores them for
// http. A variable that is read and unusable is an InvalidArgument naming it and its value
// (a token's value is never shown).
//
// Thread safety: thread-compatible; reads the environment through the given lookup only.
#ifndef REGISTRY_TOOLS_CTL_ENV_H_
#define REGISTRY_TOOLS_CTL_ENV_H_

#include <functional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "conf/registry_config.h"
#include "host/plugin_client.h"

namespace registry::tools {

// Returns the value of an environment variable, or nullptr when unset.
using EnvLookup = std::function<const char*(const char* name)>;

struct PropSources {
  plugin::PropList flags;     // props given on the command line, only those set
  plugin::PropList defaults;  // used without --config, for a key nothing above sets
  // The --config file, loaded and valid, and the prop keys it writes; null without --config.
  const conf::RegistryConfig* file = nullptr;
  std::set<std::string> file_keys;
  EnvLookup getenv;
};

// The props to create the repository with: `flags`, then what the environment adds for keys
// neither the flags nor the file set, then (without a file) `defaults`. With a file they are
// overrides of it. Errors: InvalidArgument naming the variable and its value.
absl::StatusOr<plugin::PropList> ResolveProps(const PropSources& sources);

// The keys of the props block of the registry YAML at `path` (already validated by
// conf::LoadRegistryYamlFile). Errors: InvalidArgument naming the file.
absl::StatusOr<std::set<std::string>> ConfigPropKeys(const std::string& path);

// The --help section describing the variables and the order of precedence.
const char* EnvironmentHelp();

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_CTL_ENV_H_
