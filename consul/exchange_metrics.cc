// SPDX-License-Identifier: Apache-2.0
// consul/exchange_metrics.cc
#include "consul/exchange_metrics.h"

#include "absl/strings/match.h"
#include "consul/transport.h"

namespace registry::consul {
namespace {

using metrics::Index;
using Endpoint = RequestEndpoint;
using Outcome = RequestOutcome;

metrics::LabelSet EndpointLabel() {
  return {"endpoint", {"kv", "txn", "session", "status", "other", "blocking_query"}};
}

}  // namespace

RequestFamilies::RequestFamilies()
    : requests(
          metrics::MetricName("requests_total"),
          "HTTP exchanges with Consul, by API and by how they ended (transport_error: no "
          "server reached; unknown_outcome: sent, and no complete answer came).",
          {EndpointLabel(),
           {"outcome",
            {"ok", "http_4xx", "http_5xx", "transport_error", "unknown_outcome", "cancelled"}}}),
      request_duration(metrics::MetricName("request_duration_seconds"),
                       "Time from sending a request to its answer or failure (blocking reads "
                       "excluded: they wait by design).",
                       {EndpointLabel()}) {}

std::vector<const metrics::FamilyBase*> RequestFamilies::families() const {
  return {&requests, &request_duration};
}

RequestFamilies& RequestMetrics() { return metrics::RegisteredOnce<RequestFamilies>(); }

Endpoint EndpointOf(const HttpRequest& request) {
  if (request.wait > absl::ZeroDuration()) return Endpoint::kBlockingQuery;
  const absl::string_view path = request.path;
  if (absl::StartsWith(path, "/v1/kv/")) return Endpoint::kKv;
  if (path == "/v1/txn") return Endpoint::kTxn;
  if (absl::StartsWith(path, "/v1/session/")) return Endpoint::kSession;
  if (absl::StartsWith(path, "/v1/status/")) return Endpoint::kStatus;
  return Endpoint::kOther;
}

Outcome OutcomeOf(const HttpRequest& request, const absl::StatusOr<HttpResponse>& response) {
  if (!response.ok()) {
    const absl::Status& error = response.status();
    if (absl::IsCancelled(error)) return Outcome::kCancelled;
    if (IsNotSent(error)) return Outcome::kTransportError;  // connection errors included
    return Outcome::kUnknownOutcome;
  }
  const int status = response->status;
  if (status >= 500) return Outcome::kHttp5xx;
  if (status == 404 && request.method == HttpMethod::kGet) return Outcome::kOk;  // "absent"
  if (status >= 400) return Outcome::kHttp4xx;
  return Outcome::kOk;
}

void RecordExchange(const HttpRequest& request, const absl::StatusOr<HttpResponse>& response,
                    absl::Duration elapsed) {
  RequestFamilies& m = RequestMetrics();
  const Endpoint endpoint = EndpointOf(request);
  m.requests.At({Index(endpoint), Index(OutcomeOf(request, response))}).Increment();
  if (endpoint != Endpoint::kBlockingQuery) {
    m.request_duration.At({Index(endpoint)}).Observe(elapsed);
  }
}

}  // namespace registry::consul
