// SPDX-License-Identifier: Apache-2.0
// consul/client_exchanges.cc
#include "consul/client_exchanges.h"

#include <utility>

#include "consul/exchange_metrics.h"

namespace registry::consul {

ClientExchanges::ClientExchanges(Client& client)
    : client_(client), curl_options_(CurlOptionsFrom(client.options())) {}

absl::StatusOr<HttpRequest> ClientExchanges::Prepare(absl::StatusOr<HttpRequest> request) const {
  if (!request.ok()) return request;
  request->server = client_.PreferredServer();
  ApplyClientOptions(client_.options(), &*request);
  return request;
}

void ClientExchanges::Complete(const HttpRequest& request,
                               const absl::StatusOr<HttpResponse>& response,
                               const absl::Status& outcome, absl::Duration elapsed) const {
  RecordExchange(request, response, elapsed);
  client_.ReportOutcome(outcome);
}

void ClientExchanges::AvoidServer(absl::string_view server) const {
  client_.ReportServerFailure(server);
}

absl::StatusOr<KvListResult> ClientExchanges::ListNow(absl::string_view prefix,
                                                      Canceller* canceller) const {
  return client_.KvList(prefix, {}, canceller);
}

}  // namespace registry::consul
