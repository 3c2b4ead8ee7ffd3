// SPDX-License-Identifier: Apache-2.0
#include "consul/status.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "consul/errors.h"
#include "consul/json_util.h"
#include "nlohmann/json.hpp"

namespace registry::consul {

HttpRequest BuildStatusLeaderRequest() {
  HttpRequest request;
  request.method = HttpMethod::kGet;
  request.path = "/v1/status/leader";
  return request;
}

absl::StatusOr<std::string> ParseStatusLeaderResponse(const HttpRequest& request,
                                                      const HttpResponse& response) {
  if (response.status != 200) return ErrorFromResponse(request, response);
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  if (!body.is_string()) {
    return MalformedResponse(request,
                             absl::StrCat("body is a JSON ", body.type_name(), ", not a string"));
  }
  return body.get<std::string>();
}

}  // namespace registry::consul
