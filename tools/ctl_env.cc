// SPDX-License-Identifier: Apache-2.0
// tools/ctl_env.cc
//
// The variables keep the meanings and formats of Consul's own client (its api package and CLI):
// CONSUL_HTTP_ADDR is one address, optionally http:// or https://; CONSUL_HTTP_SSL and
// CONSUL_HTTP_SSL_VERIFY are Go booleans; CONSUL_HTTP_TOKEN_FILE wins over CONSUL_HTTP_TOKEN;
// CONSUL_TLS_SERVER_NAME may carry a port, which is dropped. Where Consul's client would go on
// with a value it cannot use (a bad boolean, an empty token file), registryctl stops and says so.
#include "tools/ctl_env.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace registry::tools {
namespace {

constexpr char kServers[] = "server-lists";
constexpr char kToken[] = "token";
constexpr char kTokenFile[] = "tokenFile";
constexpr char kDefaultConsulAddress[] = "127.0.0.1:8500";  // Consul's client's default

using Prop = std::pair<std::string, std::string>;

// The value of `name`, "" when unset (Consul treats an empty variable as unset).
std::string Read(const EnvLookup& getenv, const char* name) {
  const char* value = getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

absl::Status EnvError(absl::string_view name, absl::string_view value, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("environment variable ", name, "='", value, "' ", what));
}

// Go's strconv.ParseBool, which Consul's client uses for its boolean variables.
std::optional<bool> ParseGoBool(absl::string_view text) {
  for (absl::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == yes) return true;
  }
  for (absl::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == no) return false;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<bool>> ReadBool(const EnvLookup& getenv, const char* name) {
  const std::string value = Read(getenv, name);
  if (value.empty()) return std::nullopt;
  std::optional<bool> parsed = ParseGoBool(value);
  if (!parsed.has_value()) {
    return EnvError(name, value, "is not a boolean (true, false, 1, 0, t, f)");
  }
  return parsed;
}

// A relative file name is the working directory's, as for Consul's client.
std::string Absolute(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return absl::StrCat(cwd, "/", path);
}

// Checks `props` as the plugin will (conf's validation, files read), on a config with an
// https:// server so that TLS props are accepted. Errors name `name` and `shown`.
absl::Status Check(const std::vector<Prop>& props, const char* name, absl::string_view shown) {
  std::vector<Prop> all = {{"namespace", "registryctl"}};
  const bool sets_servers = std::any_of(props.begin(), props.end(),
                                        [](const Prop& prop) { return prop.first == kServers; });
  if (!sets_servers) all.emplace_back(kServers, "https://127.0.0.1:8501");
  all.insert(all.end(), props.begin(), props.end());
  absl::StatusOr<conf::RegistryConfig> checked = conf::ParseRegistryProps(all);
  if (checked.ok()) return absl::OkStatus();
  return EnvError(name, shown, absl::StrCat("cannot be used: ", checked.status().message()));
}

// CONSUL_HTTP_ADDR and CONSUL_HTTP_SSL as one server-lists entry, or nullopt when neither is set.
absl::StatusOr<std::optional<std::string>> ServerFromEnv(const EnvLookup& getenv) {
  constexpr char kAddr[] = "CONSUL_HTTP_ADDR";
  ASSIGN_OR_RETURN(std::optional<bool> ssl, ReadBool(getenv, "CONSUL_HTTP_SSL"));
  const std::string value = Read(getenv, kAddr);
  if (value.empty() && !ssl.value_or(false)) return std::nullopt;
  std::string address = value.empty() ? kDefaultConsulAddress : value;
  bool https = ssl.value_or(false);  // as Consul: never back to http once TLS is asked for
  if (const size_t scheme_end = address.find("://"); scheme_end != std::string::npos) {
    const std::string scheme = address.substr(0, scheme_end);
    if (scheme == "unix") return EnvError(kAddr, value, "is a unix socket: use host:port");
    if (scheme != "http" && scheme != "https") {
      return EnvError(
          kAddr, value,
          absl::StrCat("has an unknown scheme '", scheme, "': use host:port, http:// or https://"));
    }
    https = https || scheme == "https";
    address = address.substr(scheme_end + 3);
  }
  if (absl::StrContains(address, ',')) {
    return EnvError(kAddr, value,
                    "holds several addresses; like Consul's CLI, registryctl takes one here "
                    "(several: --servers or server-lists)");
  }
  std::string entry = https ? absl::StrCat("https://", address) : address;
  RETURN_IF_ERROR(Check({{kServers, entry}}, kAddr, value));
  return entry;
}

// CONSUL_HTTP_TOKEN_FILE (which wins, as in Consul's client) or CONSUL_HTTP_TOKEN.
absl::StatusOr<std::optional<Prop>> TokenFromEnv(const EnvLookup& getenv) {
  if (std::string file = Read(getenv, "CONSUL_HTTP_TOKEN_FILE"); !file.empty()) {
    Prop prop{kTokenFile, Absolute(file)};
    RETURN_IF_ERROR(Check({prop}, "CONSUL_HTTP_TOKEN_FILE", file));
    return prop;
  }
  if (std::string token = Read(getenv, "CONSUL_HTTP_TOKEN"); !token.empty()) {
    Prop prop{kToken, token};
    RETURN_IF_ERROR(Check({prop}, "CONSUL_HTTP_TOKEN", "<not shown>"));
    return prop;
  }
  return std::nullopt;
}

// The TLS variables whose props `file_sets` does not report set by the --config file.
absl::StatusOr<std::vector<Prop>> TlsFromEnv(const EnvLookup& getenv, bool with_file,
                                             const std::function<bool(const char*)>& file_sets) {
  std::vector<Prop> props;
  if (!file_sets("tlsCaFile")) {
    if (std::string ca = Read(getenv, "CONSUL_CACERT"); !ca.empty()) {
      props.emplace_back("tlsCaFile", Absolute(ca));
      RETURN_IF_ERROR(Check({props.back()}, "CONSUL_CACERT", ca));
    } else if (std::string dir = Read(getenv, "CONSUL_CAPATH"); !dir.empty()) {
      return EnvError("CONSUL_CAPATH", dir,
                      "is not supported: registryctl takes one PEM bundle, set CONSUL_CACERT");
    }
  }
  if (!file_sets("tlsCertFile") && !file_sets("tlsKeyFile")) {
    const std::string cert = Read(getenv, "CONSUL_CLIENT_CERT");
    const std::string key = Read(getenv, "CONSUL_CLIENT_KEY");
    if (cert.empty() != key.empty()) {
      return cert.empty()
                 ? EnvError("CONSUL_CLIENT_KEY", key, "is set without CONSUL_CLIENT_CERT")
                 : EnvError("CONSUL_CLIENT_CERT", cert, "is set without CONSUL_CLIENT_KEY");
    }
    if (!cert.empty()) {
      if (with_file) {
        return EnvError("CONSUL_CLIENT_CERT", cert,
                        "cannot add a client certificate to a --config file: write tlsCertFile "
                        "and tlsKeyFile in the file");
      }
      RETURN_IF_ERROR(Check({{"tlsCertFile", Absolute(cert)}, {"tlsKeyFile", Absolute(key)}},
                            "CONSUL_CLIENT_CERT", cert));
      props.emplace_back("tlsCertFile", Absolute(cert));
      props.emplace_back("tlsKeyFile", Absolute(key));
    }
  }
  if (!file_sets("tlsServerName")) {
    if (std::string name = Read(getenv, "CONSUL_TLS_SERVER_NAME"); !name.empty()) {
      std::string host = name;  // Consul's client drops a port: "server.dc1.consul:8501"
      if (const size_t colon = host.rfind(':');
          colon != std::string::npos && host.rfind(']') == std::string::npos) {
        host.resize(colon);
      }
      props.emplace_back("tlsServerName", host);
      RETURN_IF_ERROR(Check({props.back()}, "CONSUL_TLS_SERVER_NAME", name));
    }
  }
  if (!file_sets("tlsVerify")) {
    ASSIGN_OR_RETURN(std::optional<bool> verify, ReadBool(getenv, "CONSUL_HTTP_SSL_VERIFY"));
    if (verify.has_value()) props.emplace_back("tlsVerify", *verify ? "true" : "false");
  }
  return props;
}

bool AnyHttps(absl::string_view server_lists) {
  for (absl::string_view entry : absl::StrSplit(server_lists, ',')) {
    if (absl::StartsWithIgnoreCase(absl::StripAsciiWhitespace(entry), "https://")) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<plugin::PropList> ResolveProps(const PropSources& sources) {
  plugin::PropList props = sources.flags;
  auto given = [&props](absl::string_view key) {
    return std::any_of(props.begin(), props.end(), [key](const Prop& p) { return p.first == key; });
  };
  auto file_sets = [&sources](const char* key) { return sources.file_keys.contains(key); };
  const bool with_file = sources.file != nullptr;
  if (!with_file && !given(kServers)) {  // a --config file always names its servers
    ASSIGN_OR_RETURN(std::optional<std::string> server, ServerFromEnv(sources.getenv));
    if (server.has_value()) props.emplace_back(kServers, *server);
  }
  if (!given(kToken) && !given(kTokenFile) && !file_sets(kToken) && !file_sets(kTokenFile)) {
    ASSIGN_OR_RETURN(std::optional<Prop> token, TokenFromEnv(sources.getenv));
    if (token.has_value()) props.push_back(*std::move(token));
  }
  if (!with_file) {
    for (const Prop& fallback : sources.defaults) {
      if (!given(fallback.first)) props.push_back(fallback);
    }
  }
  std::string servers;
  for (const Prop& prop : props) {
    if (prop.first == kServers) servers = prop.second;
  }
  if (servers.empty() && with_file) {
    for (const std::string& server : sources.file->servers) absl::StrAppend(&servers, server, ",");
  }
  if (!AnyHttps(servers)) return props;  // Consul's client ignores its TLS settings for http
  ASSIGN_OR_RETURN(std::vector<Prop> tls, TlsFromEnv(sources.getenv, with_file, file_sets));
  props.insert(props.end(), tls.begin(), tls.end());
  return props;
}

absl::StatusOr<std::set<std::string>> ConfigPropKeys(const std::string& path) {
  try {
    const YAML::Node root = YAML::LoadFile(path);
    const YAML::Node repository = root["mode"] ? root["mode"]["repository"] : root["repository"];
    std::set<std::string> keys;
    if (!repository || !repository["props"]) return keys;
    for (const auto& entry : repository["props"]) keys.insert(entry.first.as<std::string>());
    return keys;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

const char* EnvironmentHelp() {
  return "\nEnvironment (Consul's CLI conventions; with --config only for props the file does\n"
         "not set, and the TLS ones only when a server uses https://):\n"
         "  CONSUL_HTTP_ADDR        one HOST:PORT, http://HOST:PORT or https://HOST:PORT\n"
         "                          (server-lists); https:// turns TLS on\n"
         "  CONSUL_HTTP_SSL         true: https for CONSUL_HTTP_ADDR (or 127.0.0.1:8500)\n"
         "  CONSUL_HTTP_TOKEN_FILE  file holding the ACL token (tokenFile); wins over\n"
         "  CONSUL_HTTP_TOKEN       the ACL token (token)\n"
         "  CONSUL_CACERT           CA bundle, PEM (tlsCaFile); CONSUL_CAPATH is not supported\n"
         "  CONSUL_CLIENT_CERT      client certificate, PEM (tlsCertFile), with\n"
         "  CONSUL_CLIENT_KEY       its key, PEM (tlsKeyFile); not with --config\n"
         "  CONSUL_TLS_SERVER_NAME  name the server certificate must carry (tlsServerName)\n"
         "  CONSUL_HTTP_SSL_VERIFY  false: do not verify the server certificate (tlsVerify)\n"
         "Each setting comes from the first of: a flag, the --config file, the environment,\n"
         "the default shown. A bad value is a usage error naming the variable (exit 2).\n";
}

}  // namespace registry::tools
