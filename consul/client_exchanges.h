// SPDX-License-Identifier: Apache-2.0
// consul/client_exchanges.h
//
// ClientExchanges is what a caller that drives its own HTTP transfers (the watch engine's curl
// multi loop, on its IO thread) uses of a Client, so that the client's work is done in one place
// whoever drives the transfer: the client-wide parts of a request (token header, datacenter,
// timeout), the choice of server and failover, the metrics of each exchange, and the
// reachability its outcome reports to the client's listeners.
//
//   absl::StatusOr<HttpRequest> request = exchanges.Prepare(BuildKvListRequest(key, options));
//   ... CurlExchange::Start(easy, *request, exchanges.curl_options()), then drive it ...
//   exchanges.Complete(*request, response, ParseKvReadAnswer(*request, response).status(),
//                      elapsed);
//   if (/* the answer says the server failed */) exchanges.AvoidServer(request->server);
//
// A watch's starting view is an ordinary call (ListNow), so that the watch engine needs nothing
// else of the client.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef CONSUL_CLIENT_EXCHANGES_H_
#define CONSUL_CLIENT_EXCHANGES_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "consul/client.h"
#include "consul/curl_exchange.h"
#include "consul/http_types.h"

namespace registry::consul {

class ClientExchanges {
 public:
  // `client` must outlive this object.
  explicit ClientExchanges(Client& client);

  // The libcurl settings of the client's options (TLS files, verification, connect timeout).
  const CurlOptions& curl_options() const { return curl_options_; }

  // `request` with the client-wide parts, addressed to the server the client prefers now (the
  // last one that answered). Errors: the building error of `request` itself.
  absl::StatusOr<HttpRequest> Prepare(absl::StatusOr<HttpRequest> request) const;

  // After an exchange of `request` ended with `response`: records its metrics (exchange
  // metrics.h; `elapsed` since it was sent) and tells the reachability listeners what `outcome`
  // (the parsed answer's status) says of the store.
  void Complete(const HttpRequest& request, const absl::StatusOr<HttpResponse>& response,
                const absl::Status& outcome, absl::Duration elapsed) const;

  // `server` (a request's HttpRequest::server) failed an exchange: later exchanges and calls
  // start with the next server.
  void AvoidServer(absl::string_view server) const;

  // The listing of everything under `prefix` (Consul's default read mode), as a call of the
  // client on the caller's thread, with its retries and failover; `canceller` cuts it.
  absl::StatusOr<KvListResult> ListNow(absl::string_view prefix, Canceller* canceller) const;

 private:
  Client& client_;
  const CurlOptions curl_options_;
};

}  // namespace registry::consul

#endif  // CONSUL_CLIENT_EXCHANGES_H_
