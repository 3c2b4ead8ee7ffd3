// SPDX-License-Identifier: Apache-2.0
#include "consul/server_list.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace registry::consul {
namespace {

absl::Status EntryError(size_t position, absl::string_view entry, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("server-lists entry ", position, " '", absl::CHexEscape(entry), "': ", problem));
}

bool IsHostChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

absl::StatusOr<ServerAddress> ParseEntry(size_t position, absl::string_view entry) {
  if (absl::StrContains(entry, '@')) {
    return absl::InvalidArgumentError(
        absl::StrCat("server-lists entry ", position,
                     ": credentials in a server address are not supported (use the ACL token)"));
  }
  ServerAddress address;
  absl::string_view rest = entry;
  if (absl::StartsWithIgnoreCase(rest, "https://")) {
    address.https = true;
    rest.remove_prefix(8);
  } else if (absl::StartsWithIgnoreCase(rest, "http://")) {
    rest.remove_prefix(7);
  } else if (absl::StrContains(rest, "://")) {
    return EntryError(position, entry, "scheme must be http:// or https://");
  }
  if (absl::EndsWith(rest, "/")) rest.remove_suffix(1);
  if (absl::StrContains(rest, '/') || absl::StrContains(rest, '?') ||
      absl::StrContains(rest, '#')) {
    return EntryError(position, entry, "must be host:port without a path");
  }
  absl::string_view host;
  absl::string_view port;
  if (absl::StartsWith(rest, "[")) {
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) return EntryError(position, entry, "unclosed '['");
    host = rest.substr(1, close - 1);
    absl::string_view after = rest.substr(close + 1);
    if (!absl::StartsWith(after, ":")) return EntryError(position, entry, "missing port");
    port = after.substr(1);
    if (host.empty() || !std::all_of(host.begin(), host.end(), [](char c) {
          return absl::ascii_isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
        })) {
      return EntryError(position, entry, "invalid IPv6 address");
    }
  } else {
    size_t colon = rest.rfind(':');
    if (colon == absl::string_view::npos) return EntryError(position, entry, "missing port");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (host.empty()) return EntryError(position, entry, "missing host");
    if (!std::all_of(host.begin(), host.end(), IsHostChar)) {
      return EntryError(position, entry, "invalid host name");
    }
  }
  uint32_t port_number = 0;
  if (port.empty() ||
      !std::all_of(port.begin(), port.end(),
                   [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) ||
      !absl::SimpleAtoi(port, &port_number) || port_number == 0 || port_number > 65535) {
    return EntryError(position, entry, "port must be a number in [1, 65535]");
  }
  address.host = std::string(host);
  address.port = static_cast<uint16_t>(port_number);
  bool ipv6 = absl::StrContains(host, ':');
  address.base_url = absl::StrCat(address.https ? "https://" : "http://", ipv6 ? "[" : "", host,
                                  ipv6 ? "]" : "", ":", address.port);
  return address;
}

}  // namespace

absl::StatusOr<std::vector<ServerAddress>> ParseServerList(absl::string_view text) {
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError("server-lists is empty: expected host:port[,host:port...]");
  }
  std::vector<ServerAddress> servers;
  size_t position = 0;
  for (absl::string_view raw : absl::StrSplit(text, ',')) {
    ++position;
    absl::string_view entry = absl::StripAsciiWhitespace(raw);
    if (entry.empty()) return EntryError(position, entry, "empty entry");
    absl::StatusOr<ServerAddress> address = ParseEntry(position, entry);
    if (!address.ok()) return address.status();
    if (std::find(servers.begin(), servers.end(), *address) == servers.end()) {
      servers.push_back(*std::move(address));
    }
  }
  return servers;
}

}  // namespace registry::consul
