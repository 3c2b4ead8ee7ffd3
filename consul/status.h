// SPDX-License-Identifier: Apache-2.0
// consul/status.h
//
// The status endpoint (GET /v1/status/leader) as a request builder and a response parser: the
// cheapest way to check that a server answers and the cluster has a leader.
//
// Thread safety: pure functions.
#ifndef CONSUL_STATUS_H_
#define CONSUL_STATUS_H_

#include <string>

#include "absl/status/statusor.h"
#include "consul/http_types.h"

namespace registry::consul {

HttpRequest BuildStatusLeaderRequest();

// The leader's RPC address ("10.0.0.1:8300"), or "" when the cluster has no leader.
absl::StatusOr<std::string> ParseStatusLeaderResponse(const HttpRequest& request,
                                                      const HttpResponse& response);

}  // namespace registry::consul

#endif  // CONSUL_STATUS_H_
