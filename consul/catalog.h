// SPDX-License-Identifier: Apache-2.0
// consul/catalog.h
//
// The catalog endpoint the instance sessions need (PUT /v1/catalog/register) as a request builder
// and a response parser. A session belongs to a node: by default the node of the agent the
// request went to, which, for a client talking straight to servers, is a server's node; when
// Consul deregisters that node (autopilot removing a server cut off for some seconds) it
// invalidates every session on it. A node registered through the catalog by the plugin itself
// belongs to no agent: no agent's failure or removal deregisters it.
//
// Thread safety: pure functions.
#ifndef CONSUL_CATALOG_H_
#define CONSUL_CATALOG_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "consul/http_types.h"

namespace registry::consul {

// Registers `node` with no service and no check, marked as an external node
// (NodeMeta external-node=true, external-probe=false: no health tool probes it). Its address is
// its name: nothing connects to it. Idempotent, so replay-safe.
// Errors: InvalidArgument for an empty node name.
absl::StatusOr<HttpRequest> BuildCatalogRegisterRequest(absl::string_view node);

// OK when the server answered `true`. Errors: PermissionDenied when the token may not write the
// node; otherwise as errors.h.
absl::Status ParseCatalogRegisterResponse(const HttpRequest& request, const HttpResponse& response);

// True for the answer to a session create naming a node the catalog does not know (500 "Missing
// node registration").
bool IsMissingNodeAnswer(const absl::Status& status);

}  // namespace registry::consul

#endif  // CONSUL_CATALOG_H_
