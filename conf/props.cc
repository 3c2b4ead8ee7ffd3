// SPDX-License-Identifier: Apache-2.0
// conf/props.cc
#include "conf/props.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "conf/values.h"

namespace registry::conf {
namespace {

// ShardingSphere's keys.
constexpr absl::string_view kNamespace = "namespace";
constexpr absl::string_view kServerLists = "server-lists";
constexpr absl::string_view kTimeToLiveSeconds = "timeToLiveSeconds";
constexpr absl::string_view kBlockQueryTimeToSeconds = "blockQueryTimeToSeconds";
// Ours, camelCase like the above.
constexpr absl::string_view kBlockQueryTimeMilliseconds = "blockQueryTimeMilliseconds";
constexpr absl::string_view kToken = "token";
constexpr absl::string_view kTokenFile = "tokenFile";
constexpr absl::string_view kDatacenter = "datacenter";
constexpr absl::string_view kSessionNode = "sessionNode";
constexpr absl::string_view kTlsCaFile = "tlsCaFile";
constexpr absl::string_view kTlsVerify = "tlsVerify";
constexpr absl::string_view kTlsCertFile = "tlsCertFile";
constexpr absl::string_view kTlsKeyFile = "tlsKeyFile";
constexpr absl::string_view kTlsServerName = "tlsServerName";
constexpr absl::string_view kConnectTimeout = "connectTimeoutMilliseconds";
constexpr absl::string_view kRequestTimeout = "requestTimeoutMilliseconds";
constexpr absl::string_view kSessionLockDelay = "sessionLockDelayMilliseconds";
constexpr absl::string_view kLockRetry = "lockRetryMilliseconds";
constexpr absl::string_view kLogLevel = "logLevel";
constexpr absl::string_view kTxnMaxOperations = "txnMaxOperations";
constexpr absl::string_view kWatchMaxConnections = "watchMaxConnections";
// Only in a flat props map, where there is no mode:/repository: block to carry them.
constexpr absl::string_view kType = "type";
constexpr absl::string_view kOverwrite = "overwrite";

// The limits are base/limits.h's; a prop's plain number is in the unit its name says.
constexpr absl::Duration kMs = absl::Milliseconds(1);
constexpr DurationRule kTtlRule = {absl::Seconds(1), kMs, limits::kMaxSessionTtl};
constexpr DurationRule kBlockSecondsRule = {absl::Seconds(1), kMs, limits::kMaxBlockQueryWait};
constexpr DurationRule kBlockMillisRule = {kMs, kMs, limits::kMaxBlockQueryWait};
constexpr DurationRule kTimeoutRule = {kMs, kMs, limits::kMaxTimeout};
constexpr DurationRule kLockDelayRule = {kMs, absl::ZeroDuration(), limits::kMaxLockDelay};
constexpr DurationRule kLockRetryRule = {kMs, kMs, limits::kMaxLockRetry};

std::vector<std::string> KeyList(bool with_mode_keys) {
  std::vector<std::string> keys;
  for (absl::string_view key : {kNamespace,
                                kServerLists,
                                kTimeToLiveSeconds,
                                kBlockQueryTimeToSeconds,
                                kBlockQueryTimeMilliseconds,
                                kToken,
                                kTokenFile,
                                kDatacenter,
                                kSessionNode,
                                kTlsCaFile,
                                kTlsVerify,
                                kTlsCertFile,
                                kTlsKeyFile,
                                kTlsServerName,
                                kConnectTimeout,
                                kRequestTimeout,
                                kSessionLockDelay,
                                kLockRetry,
                                kLogLevel,
                                kTxnMaxOperations,
                                kWatchMaxConnections}) {
    keys.emplace_back(key);
  }
  if (with_mode_keys) {
    keys.emplace_back(kType);
    keys.emplace_back(kOverwrite);
  }
  return keys;
}

}  // namespace

absl::Status UnknownKeyError(absl::string_view block, absl::string_view key,
                             const std::vector<std::string>& known, absl::string_view where) {
  std::string closest = ClosestKey(key, known);
  std::string hint = closest.empty() ? "" : absl::StrCat(", did you mean '", closest, "'?");
  return absl::InvalidArgumentError(absl::StrCat(block, ": unknown key '", key, "'", hint, where));
}

std::string AtLine(int line) { return line > 0 ? absl::StrCat(" (line ", line, ")") : ""; }

PropsBuilder::PropsBuilder(RegistryConfig start, std::string base_dir, Keys keys)
    : config_(std::move(start)), base_dir_(std::move(base_dir)), keys_(keys) {}

const std::vector<std::string>& PropsBuilder::KnownKeys() const {
  static const auto* const kProps = new std::vector<std::string>(KeyList(false));
  static const auto* const kWithModeKeys = new std::vector<std::string>(KeyList(true));
  return keys_ == Keys::kProps ? *kProps : *kWithModeKeys;
}

absl::Status PropsBuilder::Set(absl::string_view key, absl::string_view value,
                               absl::string_view where) {
  const std::vector<std::string>& known = KnownKeys();
  if (std::find(known.begin(), known.end(), key) == known.end()) {
    return UnknownKeyError("props", key, known, where);
  }
  std::string shown = key == kToken ? "" : absl::StrCat("'", value, "' ");
  if (!seen_.insert(std::string(key)).second) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": ", shown, "sets the key twice", where));
  }
  if ((key == kToken && seen_.contains(kTokenFile)) ||
      (key == kTokenFile && seen_.contains(kToken))) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": ", shown, "conflicts with ",
                                                   key == kToken ? kTokenFile : kToken,
                                                   "; set only one", where));
  }
  absl::Status status = Apply(key, value);
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(key, ": ", status.message(), where));
}

absl::StatusOr<std::string> PropsBuilder::ReadPropFile(absl::string_view value,
                                                       std::string* path) const {
  if (value.empty()) return absl::InvalidArgumentError("'' is not a file name");
  *path = std::string(value);
  if (!base_dir_.empty() && path->front() != '/') {
    *path = absl::StrCat(base_dir_, absl::EndsWith(base_dir_, "/") ? "" : "/", value);
  }
  absl::StatusOr<std::string> content = ReadTextFile(*path);
  if (!content.ok()) {
    return absl::Status(content.status().code(),
                        absl::StrCat("'", value, "' ", content.status().message()));
  }
  return content;
}

absl::StatusOr<std::string> PropsBuilder::PemFile(absl::string_view value) const {
  if (value.empty()) return std::string();
  std::string path;
  ASSIGN_OR_RETURN(std::string content, ReadPropFile(value, &path));
  if (absl::StripAsciiWhitespace(content).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", value, "' is empty"));
  }
  return path;
}

absl::Status PropsBuilder::Apply(absl::string_view key, absl::string_view value) {
  if (key == kNamespace) {
    RETURN_IF_ERROR(ValidateNamespace(value));
    config_.namespace_name = std::string(value);
  } else if (key == kServerLists) {
    ASSIGN_OR_RETURN(config_.servers, ParseServerList(value));
  } else if (key == kTimeToLiveSeconds) {
    ASSIGN_OR_RETURN(config_.session_ttl, ParseDurationValue(value, kTtlRule));
  } else if (key == kBlockQueryTimeToSeconds) {
    // Validated even when blockQueryTimeMilliseconds wins, so a typo never hides.
    ASSIGN_OR_RETURN(absl::Duration wait, ParseDurationValue(value, kBlockSecondsRule));
    if (!seen_.contains(kBlockQueryTimeMilliseconds)) config_.block_query_wait = wait;
  } else if (key == kBlockQueryTimeMilliseconds) {
    ASSIGN_OR_RETURN(config_.block_query_wait, ParseDurationValue(value, kBlockMillisRule));
  } else if (key == kToken) {
    if (absl::Status status = ValidateToken(value); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("value ", status.message()));
    }
    config_.token = std::string(value);
  } else if (key == kTokenFile) {
    std::string path;
    ASSIGN_OR_RETURN(std::string content, ReadPropFile(value, &path));
    absl::string_view token = absl::StripAsciiWhitespace(content);
    if (absl::Status status = ValidateToken(token); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", value, "' holds a token that ", status.message()));
    }
    config_.token = std::string(token);
  } else if (key == kSessionNode) {
    RETURN_IF_ERROR(limits::ValidateNodeName(value));
    config_.session_node = std::string(value);
  } else if (key == kDatacenter) {
    RETURN_IF_ERROR(ValidateDatacenter(value));
    config_.datacenter = std::string(value);
  } else if (key == kTlsCaFile) {
    ASSIGN_OR_RETURN(config_.tls_ca_file, PemFile(value));  // empty: the system CA store
  } else if (key == kTlsVerify) {
    ASSIGN_OR_RETURN(config_.tls_verify, ParseBoolValue(value));
  } else if (key == kTlsCertFile) {
    ASSIGN_OR_RETURN(config_.tls_cert_file, PemFile(value));
  } else if (key == kTlsKeyFile) {
    ASSIGN_OR_RETURN(config_.tls_key_file, PemFile(value));
  } else if (key == kTlsServerName) {
    if (!value.empty()) RETURN_IF_ERROR(ValidateDnsName(value));
    config_.tls_server_name = std::string(value);
  } else if (key == kConnectTimeout) {
    ASSIGN_OR_RETURN(config_.connect_timeout, ParseDurationValue(value, kTimeoutRule));
  } else if (key == kRequestTimeout) {
    ASSIGN_OR_RETURN(config_.request_timeout, ParseDurationValue(value, kTimeoutRule));
  } else if (key == kSessionLockDelay) {
    ASSIGN_OR_RETURN(config_.session_lock_delay, ParseDurationValue(value, kLockDelayRule));
  } else if (key == kLockRetry) {
    ASSIGN_OR_RETURN(config_.lock_retry, ParseDurationValue(value, kLockRetryRule));
  } else if (key == kLogLevel) {
    config_.log_level = ParseLogLevel(value);
    if (!config_.log_level.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", value, "' is not a log level (error, warn, info or debug)"));
    }
  } else if (key == kTxnMaxOperations) {
    ASSIGN_OR_RETURN(config_.txn_max_operations,
                     ParseIntValue(value, limits::kMinTxnOperations, limits::kMaxTxnOperations));
  } else if (key == kWatchMaxConnections) {
    ASSIGN_OR_RETURN(config_.watch_max_connections,
                     ParseIntValue(value, 1, limits::kMaxWatchQueries));
  } else if (key == kType) {
    absl::string_view type = absl::StripAsciiWhitespace(value);
    if (type.empty()) return absl::InvalidArgumentError(absl::StrCat("'", value, "' is empty"));
    config_.repository_type = std::string(type);
  } else if (key == kOverwrite) {
    ASSIGN_OR_RETURN(config_.overwrite, ParseBoolValue(value));
  }
  return absl::OkStatus();
}

absl::StatusOr<RegistryConfig> PropsBuilder::Finish(absl::string_view where) && {
  if (config_.namespace_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kNamespace, ": missing from props; it is required", where));
  }
  if (config_.servers.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kServerLists, ": missing from props; it is required", where));
  }
  RETURN_IF_ERROR(CheckTls(where));
  // The rules between props, checked as the repository checks them.
  const limits::Timings timings = {config_.session_ttl,        config_.block_query_wait,
                                   config_.connect_timeout,    config_.request_timeout,
                                   config_.session_lock_delay, config_.lock_retry};
  const limits::TimingNames names = {kTimeToLiveSeconds, kBlockQueryTimeMilliseconds,
                                     kConnectTimeout,    kRequestTimeout,
                                     kSessionLockDelay,  kLockRetry};
  if (absl::Status status = limits::ValidateTimings(timings, names); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(status.message(), where));
  }
  return std::move(config_);
}

absl::Status PropsBuilder::CheckTls(absl::string_view where) const {
  if (config_.tls_cert_file.empty() != config_.tls_key_file.empty()) {
    const bool cert = !config_.tls_cert_file.empty();
    return absl::InvalidArgumentError(
        absl::StrCat(cert ? kTlsCertFile : kTlsKeyFile, ": set without ",
                     cert ? kTlsKeyFile : kTlsCertFile, "; set both or neither", where));
  }
  const bool any_https = std::any_of(
      config_.servers.begin(), config_.servers.end(),
      [](const std::string& server) { return absl::StartsWithIgnoreCase(server, "https://"); });
  if (any_https) {
    const auto plain = std::find_if(
        config_.servers.begin(), config_.servers.end(),
        [](const std::string& server) { return !absl::StartsWithIgnoreCase(server, "https://"); });
    if (plain != config_.servers.end()) {
      // A failover to a plain server would send the ACL token, and every key, in clear.
      return absl::InvalidArgumentError(absl::StrCat(
          kServerLists, ": mixes https:// servers with the plain '", *plain,
          "': a failover to it would send the ACL token in clear; use https:// for every server",
          where));
    }
    if (!config_.tls_verify) {
      Log(LogLevel::kWarn, "conf", kTlsVerify,
          " is false: the servers' certificates and host names are not checked, so anyone on "
          "the path can pose as Consul and read the ACL token");
    }
    return absl::OkStatus();
  }
  // A TLS setting with no https:// server would be silently ignored: most likely the scheme
  // was forgotten, and the user believes the traffic is protected.
  for (const auto& [key, set] : {std::pair{kTlsCaFile, !config_.tls_ca_file.empty()},
                                 std::pair{kTlsCertFile, !config_.tls_cert_file.empty()},
                                 std::pair{kTlsServerName, !config_.tls_server_name.empty()},
                                 std::pair{kTlsVerify, !config_.tls_verify}}) {
    if (set) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, ": set, but no server in ", kServerLists,
                       " uses https:// (TLS props apply to https:// servers only)", where));
    }
  }
  return absl::OkStatus();
}

}  // namespace registry::conf
