// SPDX-License-Identifier: Apache-2.0
#include "consul/client_options.h"

#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "consul/query.h"
#include "consul/server_list.h"

namespace registry::consul {
namespace {

bool HasControlCharacter(absl::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// Letters, digits, '-' and '.', no empty label: what a certificate's DNS name may hold.
bool IsDnsName(absl::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '.' || name.back() == '.') return false;
  if (absl::StrContains(name, "..")) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '.') return false;
  }
  return true;
}

absl::Status CheckReadable(absl::string_view option, const std::string& path) {
  if (path.empty() || access(path.c_str(), R_OK) == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(option, " '", absl::CHexEscape(path), "': not a readable file"));
}

absl::Status ValidateTlsOptions(const ClientOptions& options) {
  if (absl::Status status = CheckReadable("ca_file", options.ca_file); !status.ok()) return status;
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(options.cert_file.empty()
                                          ? "key_file: set without cert_file; set both or neither"
                                          : "cert_file: set without key_file; set both or neither");
  }
  if (absl::Status status = CheckReadable("cert_file", options.cert_file); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckReadable("key_file", options.key_file); !status.ok()) {
    return status;
  }
  if (!options.server_name.empty() && !IsDnsName(options.server_name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("server_name '", absl::CHexEscape(options.server_name), "': not a DNS name"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateClientOptions(const ClientOptions& options) {
  absl::StatusOr<std::vector<ServerAddress>> servers = ParseServerList(options.servers);
  if (!servers.ok()) return servers.status();
  if (HasControlCharacter(options.token)) {
    return absl::InvalidArgumentError("token: contains control characters");  // never echoed
  }
  if (HasControlCharacter(options.datacenter)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "datacenter '", absl::CHexEscape(options.datacenter), "': contains control characters"));
  }
  if (options.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "connect_timeout ", absl::FormatDuration(options.connect_timeout), ": must be positive"));
  }
  if (options.request_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request_timeout ", absl::FormatDuration(options.request_timeout), ": must be positive"));
  }
  if (options.blocking_margin < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("blocking_margin ",
                                                   absl::FormatDuration(options.blocking_margin),
                                                   ": must not be negative"));
  }
  if (options.max_response_bytes < limits::kMinResponseBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_response_bytes ", options.max_response_bytes, ": must be at least ",
                     limits::kMinResponseBytes));
  }
  return ValidateTlsOptions(options);
}

void ApplyClientOptions(const ClientOptions& options, HttpRequest* request) {
  if (!options.token.empty() && request->FindHeader("X-Consul-Token") == nullptr) {
    request->headers.emplace_back("X-Consul-Token", options.token);
  }
  if (!options.datacenter.empty() && request->FindParam("dc") == nullptr) {
    request->params.emplace_back("dc", options.datacenter);
  }
  if (request->timeout == absl::ZeroDuration()) {
    request->timeout = request->wait > absl::ZeroDuration()
                           ? BlockingTimeout(request->wait, options.blocking_margin)
                           : options.request_timeout;
  }
}

}  // namespace registry::consul
