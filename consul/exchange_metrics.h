// SPDX-License-Identifier: Apache-2.0
// consul/exchange_metrics.h
//
// The Consul client's metric families (the catalog: base/metric_catalog.h), and what one HTTP
// exchange with Consul adds to them: registry_consul_requests_total by endpoint and outcome, and,
// for a request that does not block, its duration. Every exchange is recorded once, where it
// ends: Client for its calls (one record per server tried), the watch engine for its blocking
// reads.
#ifndef CONSUL_EXCHANGE_METRICS_H_
#define CONSUL_EXCHANGE_METRICS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/metric_catalog.h"
#include "base/metrics.h"
#include "consul/http_types.h"

namespace registry::consul {

// Label `endpoint` of the request families: the Consul API a request went to. Blocking reads
// (watches and lock monitors: a request with a wait) are their own endpoint, whatever their path.
enum class RequestEndpoint { kKv, kTxn, kSession, kStatus, kOther, kBlockingQuery };
// Label `outcome` of the request families: how one HTTP exchange ended. A 404 of a read is the
// store saying "absent" and counts as ok.
enum class RequestOutcome { kOk, kHttp4xx, kHttp5xx, kTransportError, kUnknownOutcome, kCancelled };

struct RequestFamilies {
  RequestFamilies();
  std::vector<const metrics::FamilyBase*> families() const;

  metrics::CounterFamily requests;            // {endpoint, outcome}
  metrics::HistogramFamily request_duration;  // {endpoint}, not for blocking reads
};

// Made and registered on first use; never destroyed.
RequestFamilies& RequestMetrics();

// The endpoint label of `request`.
RequestEndpoint EndpointOf(const HttpRequest& request);
// The outcome label of an exchange of `request` that ended with `response`.
RequestOutcome OutcomeOf(const HttpRequest& request, const absl::StatusOr<HttpResponse>& response);

// Counts the exchange and, unless `request` blocks, observes `elapsed`.
void RecordExchange(const HttpRequest& request, const absl::StatusOr<HttpResponse>& response,
                    absl::Duration elapsed);

}  // namespace registry::consul

#endif  // CONSUL_EXCHANGE_METRICS_H_
