// SPDX-License-Identifier: Apache-2.0
// devserver/http_message.h
//
// Transport-neutral HTTP request/response values exchanged between the network layer
// (http_server.h, the only Beast user) and the endpoint logic (api.h), plus the URL decoding
// Go's net/url performs before Consul sees a request.
//
// Thread safety: value types and pure functions.
#ifndef DEVSERVER_HTTP_MESSAGE_H_
#define DEVSERVER_HTTP_MESSAGE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::devserver {

struct HttpRequest {
  std::string method;                                      // "GET", "PUT", ...
  std::string path;                                        // percent-decoded, without the query
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in request order
  std::string raw_query;                                   // as sent, without the '?'
  std::string consul_token;                                // X-Consul-Token header
  std::string authorization;                               // Authorization header
  std::optional<uint64_t> content_length;                  // when the header was sent
  std::string body;

  // True if the query has `name` (with or without a value), like Go's `_, ok := q[name]`.
  bool Has(absl::string_view name) const;
  // The first value of `name`, or "" (Go's url.Values.Get).
  std::string Get(absl::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;  // empty: no Content-Type header
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Set by PUT /v1/_dev/fault/drop-all: after this reply the server closes every other
  // connection without answering it.
  bool drop_other_connections = false;
  // Answered before any Consul handler ran (by Go's server or its ServeMux): such replies lack
  // the "Vary: Accept-Encoding" that Consul's gzip wrapper adds to every handler's reply.
  bool outside_handlers = false;
  // The connection closes after this reply, which says so (Connection: close): Go's server does
  // that when the handler left a large body unread, as Consul's size checks do.
  bool close_connection = false;
  // Written by Go's server itself (a request it cannot parse): no Date, no Content-Length, and
  // the connection closes.
  bool server_level = false;
};

// Splits a request target ("/v1/kv/a%2Fb?recurse&wait=1s") into its decoded path and query
// like Go's url.Parse + url.ParseQuery ('+' is a space in the query only). Returns
// InvalidArgument naming the bad escape when a %-escape is malformed.
absl::StatusOr<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
ParseTarget(absl::string_view target);

// `time` as an HTTP Date header value (RFC 7231 IMF-fixdate, as Go writes it).
std::string HttpDate(absl::Time time);

// The query of a request target as sent (Go's URL.RawQuery): what follows the first '?', or "".
absl::string_view RawQuery(absl::string_view target);

// Encodes a query like Go's url.Values.Encode (keys sorted, values escaped); Consul echoes it
// in its "Conflicting flags" message.
std::string EncodeQuery(const std::vector<std::pair<std::string, std::string>>& query);

}  // namespace registry::devserver

#endif  // DEVSERVER_HTTP_MESSAGE_H_
