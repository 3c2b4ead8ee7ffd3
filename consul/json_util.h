// SPDX-License-Identifier: Apache-2.0
// consul/json_util.h
//
// Exception-free JSON reading for response parsers: nlohmann::json is parsed with exceptions
// disabled and every field is type-checked, so a malformed or hostile body yields a status
// (the detail string for MalformedResponse), never a throw or a crash.
//
// Thread safety: pure functions.
#ifndef CONSUL_JSON_UTIL_H_
#define CONSUL_JSON_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "consul/http_types.h"
#include "nlohmann/json.hpp"

namespace registry::consul {

// Parses `response.body` as JSON; DataLoss naming `request` if it is not (e.g. truncated).
absl::StatusOr<nlohmann::json> ParseJsonBody(const HttpRequest& request,
                                             const HttpResponse& response);

// Field readers on a JSON object. `what` names the object in error details ("entry 3").
// Required readers fail when the field is missing; optional ones return nullopt for a missing
// or null field. Both fail when the field has the wrong type. Errors are plain details
// (InvalidArgument) that callers wrap with MalformedResponse.
absl::StatusOr<uint64_t> RequiredUint(const nlohmann::json& object, const char* field,
                                      absl::string_view what);
absl::StatusOr<std::optional<uint64_t>> OptionalUint(const nlohmann::json& object,
                                                     const char* field, absl::string_view what);
absl::StatusOr<std::string> RequiredString(const nlohmann::json& object, const char* field,
                                           absl::string_view what);
absl::StatusOr<std::optional<std::string>> OptionalString(const nlohmann::json& object,
                                                          const char* field,
                                                          absl::string_view what);

// Checks that `value` is a JSON object; detail names `what`.
absl::Status ExpectObject(const nlohmann::json& value, absl::string_view what);

}  // namespace registry::consul

#endif  // CONSUL_JSON_UTIL_H_
