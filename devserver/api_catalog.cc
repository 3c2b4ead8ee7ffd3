// SPDX-License-Identifier: Apache-2.0
// Api: PUT /v1/catalog/register (Consul's catalog_endpoint.go), for the node a session names.
// Only what the node registration does: services and checks in the body are not kept.
#include <string>

#include "absl/strings/str_cat.h"
#include "devserver/api.h"
#include "devserver/api_util.h"
#include "devserver/json_codec.h"

namespace registry::devserver {
HttpResponse Api::CatalogRegister(const HttpRequest& request) {
  stats_->Count("catalog.register");
  if (request.method == "OPTIONS") return OptionsResponse({"PUT"});
  if (request.method != "PUT") return MethodNotAllowed(request.method, {"PUT"});
  absl::StatusOr<NodeRegistration> registration = DecodeCatalogRegister(request.body);
  if (!registration.ok()) {
    return TextResponse(400,
                        absl::StrCat("Request decode failed: ", registration.status().message()));
  }
  if (auto refused = BeforeStoreCall(request)) return *refused;
  // Consul's Catalog.Register checks, in its order, with its messages (HTTP 500).
  if (registration->node.empty()) return TextResponse(500, "Must provide node");
  if (registration->address.empty()) {
    return TextResponse(500, "Must provide address if SkipNodeUpdate is not set");
  }
  store_->RegisterNode(registration->node);
  return JsonResponse(200, Json(true));
}

}  // namespace registry::devserver
