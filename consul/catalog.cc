// SPDX-License-Identifier: Apache-2.0
#include "consul/catalog.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "consul/errors.h"
#include "consul/json_util.h"
#include "nlohmann/json.hpp"

namespace registry::consul {

absl::StatusOr<HttpRequest> BuildCatalogRegisterRequest(absl::string_view node) {
  if (node.empty()) return absl::InvalidArgumentError("catalog register: empty node name");
  HttpRequest request;
  request.method = HttpMethod::kPut;
  request.path = "/v1/catalog/register";
  const nlohmann::json body = {
      {"Node", std::string(node)},
      {"Address", std::string(node)},
      {"NodeMeta", {{"external-node", "true"}, {"external-probe", "false"}}},
  };
  request.body = body.dump();
  request.replay_safe = true;  // the same registration twice is one registration
  return request;
}

absl::Status ParseCatalogRegisterResponse(const HttpRequest& request,
                                          const HttpResponse& response) {
  if (response.status != 200) return ErrorFromResponse(request, response);
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  if (!body.is_boolean() || !body.get<bool>()) {
    return MalformedResponse(request, absl::StrCat("expected true, got ", body.dump()));
  }
  return absl::OkStatus();
}

bool IsMissingNodeAnswer(const absl::Status& status) {
  const std::optional<int> http = HttpStatusOf(status);
  return http.has_value() && *http == 500 &&
         absl::StrContains(status.message(), "Missing node registration");
}

}  // namespace registry::consul
