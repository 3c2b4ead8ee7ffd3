// SPDX-License-Identifier: Apache-2.0
// consul/url.h
//
// Percent-escaping for Consul URLs. Keys travel in the path, so they are escaped byte by byte:
// only RFC 3986 unreserved characters (and '/' for keys) stay as they are; spaces, '%', '?',
// '#', control characters and every non-ASCII byte become %XX.
//
// Thread safety: pure functions.
#ifndef CONSUL_URL_H_
#define CONSUL_URL_H_

#include <string>

#include "absl/strings/string_view.h"
#include "consul/http_types.h"

namespace registry::consul {

// Escapes a KV key for use after "/v1/kv/", keeping '/' as the separator.
std::string EscapeKeyPath(absl::string_view key);

// Escapes one path segment or query component ('/' is escaped too).
std::string EscapeComponent(absl::string_view text);

// Returns request.server + request.path + "?" + escaped params (bare flags for empty values).
std::string BuildUrl(const HttpRequest& request);

}  // namespace registry::consul

#endif  // CONSUL_URL_H_
