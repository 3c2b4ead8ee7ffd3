// SPDX-License-Identifier: Apache-2.0
// consul/server_list.h
//
// Parsing of the `server-lists` property: comma-separated entries "host:port",
// "http://host:port" or "https://host:port" (IPv6 hosts in brackets, "[::1]:8500"; one
// trailing '/' tolerated). A bare "host:port" means plain HTTP.
//
// Thread safety: pure functions.
#ifndef CONSUL_SERVER_LIST_H_
#define CONSUL_SERVER_LIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace registry::consul {

struct ServerAddress {
  bool https = false;
  std::string host;  // IPv6 without brackets
  uint16_t port = 0;
  std::string base_url;  // "http://host:port" / "https://[::1]:8501", as HttpRequest::server

  friend bool operator==(const ServerAddress&, const ServerAddress&) = default;
};

// Parses `text` into at least one address, in order, duplicates removed. Errors:
// InvalidArgument naming the bad entry (1-based position and text) and what is wrong (empty
// list or entry, unknown scheme, missing/invalid port, bad host, a path). Entries carrying
// credentials ("user:pass@host") are rejected without echoing them.
absl::StatusOr<std::vector<ServerAddress>> ParseServerList(absl::string_view text);

}  // namespace registry::consul

#endif  // CONSUL_SERVER_LIST_H_
