// SPDX-License-Identifier: Apache-2.0
// consul/client_options.h
//
// ClientOptions: everything a Consul client needs to know about its servers (the `server-lists`
// addresses, ACL token, datacenter, TLS, timeouts), with validation and the helper that stamps
// the client-wide parts onto a built request. Shared by Client and by code that executes built
// requests itself (e.g. a watch engine driving its own curl multi handle).
//
// Thread safety: plain values and pure functions.
#ifndef CONSUL_CLIENT_OPTIONS_H_
#define CONSUL_CLIENT_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/limits.h"
#include "consul/http_types.h"

namespace registry::consul {

struct ClientOptions {
  // Comma-separated "host:port", "http://host:port" or "https://host:port" (server_list.h).
  std::string servers = "127.0.0.1:8500";
  std::string token{};       // ACL token sent as X-Consul-Token; empty = anonymous
  std::string datacenter{};  // sent as ?dc= on every request; empty = the agent's datacenter
  bool verify_tls = true;    // https: verify certificate and host name
  std::string ca_file{};     // https: CA bundle; empty = system default
  std::string cert_file{};   // https: client certificate (PEM); set with key_file or not at all
  std::string key_file{};    // https: the client certificate's private key (PEM)
  // https: the DNS name the server certificate must carry (and the SNI sent), instead of the host
  // of each server address; empty = the host.
  std::string server_name{};
  absl::Duration connect_timeout = limits::kDefaultConnectTimeout;
  // A whole non-blocking call, its retries included (client.h).
  absl::Duration request_timeout = limits::kDefaultRequestTimeout;
  // Added to wait + wait/16 for the client-side timeout of a blocking read.
  absl::Duration blocking_margin = absl::Seconds(5);
  // The most one answer may hold (limits.h); a larger one fails its request.
  size_t max_response_bytes = limits::kDefaultMaxResponseBytes;
};

// Validates `options`: server list, positive connect/request timeouts, non-negative margin, a
// token and datacenter without control characters, readable ca_file, cert_file and key_file (the
// last two both set or both empty), a server_name that is a DNS name. InvalidArgument names the
// option (never shows the token).
absl::Status ValidateClientOptions(const ClientOptions& options);

// Adds what every request carries: X-Consul-Token (when a token is set), ?dc= (when a
// datacenter is set and the request has none), and request->timeout when it is zero:
// BlockingTimeout(request->wait, blocking_margin) for a blocking read, else request_timeout.
// For code that executes built requests itself (e.g. a watch engine on a curl multi thread).
void ApplyClientOptions(const ClientOptions& options, HttpRequest* request);

}  // namespace registry::consul

#endif  // CONSUL_CLIENT_OPTIONS_H_
