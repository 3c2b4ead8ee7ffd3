// SPDX-License-Identifier: Apache-2.0
// consul/exchange_metrics.h
//
// What one HTTP exchange with Consul adds to the plugin's metrics (base/plugin_metrics.h):
// registry_consul_requests_total by endpoint and outcome, and, for a request that does not
// block, its duration. Every exchange is recorded once, where it ends: Client for its calls (one
// record per server tried), the watch engine for its blocking reads.
#ifndef CONSUL_EXCHANGE_METRICS_H_
#define CONSUL_EXCHANGE_METRICS_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/plugin_metrics.h"
#include "consul/http_types.h"

namespace registry::consul {

// The endpoint label of `request`.
metrics::Endpoint EndpointOf(const HttpRequest& request);
// The outcome label of an exchange of `request` that ended with `response`.
metrics::Outcome OutcomeOf(const HttpRequest& request,
                           const absl::StatusOr<HttpResponse>& response);

// Counts the exchange and, unless `request` blocks, observes `elapsed`.
void RecordExchange(const HttpRequest& request, const absl::StatusOr<HttpResponse>& response,
                    absl::Duration elapsed);

}  // namespace registry::consul

#endif  // CONSUL_EXCHANGE_METRICS_H_
