// SPDX-License-Identifier: Apache-2.0
// consul/http_types.h
//
// The plain data exchanged with a Transport: one HTTP request to one Consul server and its
// response. Request builders (kv.h, session.h, txn.h, status.h) fill everything except `server`
// and the client-wide parts (token, datacenter, timeout), which Client or ApplyClientOptions()
// add; response parsers read HttpResponse only.
//
// Thread safety: plain values; distinct objects may be used from distinct threads.
#ifndef CONSUL_HTTP_TYPES_H_
#define CONSUL_HTTP_TYPES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::consul {

enum class HttpMethod { kGet, kPut, kDelete };

// "GET", "PUT" or "DELETE".
const char* HttpMethodName(HttpMethod method);

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  HttpMethod method = HttpMethod::kGet;
  // Base URL of the server ("http://127.0.0.1:8500"), without a trailing '/'.
  std::string server;
  // Already escaped absolute path, e.g. "/v1/kv/a%20b".
  std::string path;
  // Query parameters in the order they are sent. Values are unescaped; an empty value is sent
  // as a bare flag ("?recurse"), which is how Consul reads its presence-only parameters.
  std::vector<std::pair<std::string, std::string>> params;
  HeaderList headers;
  std::string body;
  // Server-side blocking wait this request asks for (zero when it does not block). Used to
  // derive `timeout` when that is left zero.
  absl::Duration wait = absl::ZeroDuration();
  // Client-side limit for the whole exchange; zero means "not decided yet" (the client fills it).
  absl::Duration timeout = absl::ZeroDuration();
  // False when sending the request again after a lost reply could differ from sending it once: a
  // check-and-set write or checked transaction (the second apply fails against the first), a
  // session create (a second session), a plain write or delete of a key other clients write
  // (the second apply may undo a write made between the two: txn.h, Writers). libcurl silently
  // resends a request whose reused keep-alive connection closes before any reply byte, so such a
  // request always opens a new connection, where a connection lost after sending is reported
  // (Unavailable: outcome unknown) rather than resent.
  bool replay_safe = true;

  // Returns the value of the first parameter named `name`, or nullptr.
  const std::string* FindParam(absl::string_view name) const;
  // Returns the value of the first header named `name` (case-insensitive), or nullptr.
  const std::string* FindHeader(absl::string_view name) const;
};

struct HttpResponse {
  int status = 0;
  HeaderList headers;  // names as received
  std::string body;

  // Returns the value of the first header named `name` (case-insensitive), or nullptr.
  const std::string* FindHeader(absl::string_view name) const;
};

// "consul GET /v1/kv/a": the prefix of every error message about `request`. Never contains
// headers (so never the ACL token) nor query parameters.
std::string RequestLabel(const HttpRequest& request);

}  // namespace registry::consul

#endif  // CONSUL_HTTP_TYPES_H_
