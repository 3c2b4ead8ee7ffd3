// SPDX-License-Identifier: Apache-2.0
#include "consul/json_util.h"

#include "absl/strings/str_cat.h"
#include "consul/errors.h"

namespace registry::consul {
namespace {

absl::Status FieldError(absl::string_view what, const char* field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": \"", field, "\" ", problem));
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJsonBody(const HttpRequest& request,
                                             const HttpResponse& response) {
  nlohmann::json value =
      nlohmann::json::parse(response.body, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return MalformedResponse(request, absl::StrCat("body is not valid JSON (", response.body.size(),
                                                   " bytes, HTTP ", response.status, ")"));
  }
  return value;
}

absl::Status ExpectObject(const nlohmann::json& value, absl::string_view what) {
  if (!value.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is a JSON ", value.type_name(), ", not an object"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<uint64_t>> OptionalUint(const nlohmann::json& object,
                                                     const char* field, absl::string_view what) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::optional<uint64_t>();
  if (!it->is_number_unsigned()) {
    // nlohmann stores non-negative integers as unsigned; anything else (negative, fraction,
    // string) is not an index, flag or count.
    return FieldError(what, field,
                      absl::StrCat("is a JSON ", it->type_name(), ", not an unsigned integer"));
  }
  return std::optional<uint64_t>(it->get<uint64_t>());
}

absl::StatusOr<uint64_t> RequiredUint(const nlohmann::json& object, const char* field,
                                      absl::string_view what) {
  absl::StatusOr<std::optional<uint64_t>> value = OptionalUint(object, field, what);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return FieldError(what, field, "is missing");
  return **value;
}

absl::StatusOr<std::optional<std::string>> OptionalString(const nlohmann::json& object,
                                                          const char* field,
                                                          absl::string_view what) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) {
    return FieldError(what, field, absl::StrCat("is a JSON ", it->type_name(), ", not a string"));
  }
  return std::optional<std::string>(it->get<std::string>());
}

absl::StatusOr<std::string> RequiredString(const nlohmann::json& object, const char* field,
                                           absl::string_view what) {
  absl::StatusOr<std::optional<std::string>> value = OptionalString(object, field, what);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return FieldError(what, field, "is missing");
  return std::move(**value);
}

}  // namespace registry::consul
