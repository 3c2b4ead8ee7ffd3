#include "consul/client_options.h"

#include <unistd.h>

#include "absl/strings/escaping.h"
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
  if (!options.ca_file.empty() && access(options.ca_file.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ca_file '", absl::CHexEscape(options.ca_file), "': not a readable file"));
  }
  return absl::OkStatus();
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
