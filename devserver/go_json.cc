// SPDX-License-Identifier: Apache-2.0
#include "devserver/go_json.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "devserver/go_compat.h"

namespace registry::devserver {
namespace {

using Json = nlohmann::ordered_json;

const GoField* MatchField(absl::string_view key, std::initializer_list<GoField> fields) {
  for (const GoField& field : fields) {
    if (absl::EqualsIgnoreCase(key, field.name)) return &field;
  }
  return nullptr;
}

// The Go error for `value` decoded into `field`, or OK.
absl::Status CheckValue(const Json& value, absl::string_view struct_path, const GoField& field) {
  const auto wrong = [&] {
    return GoFieldTypeError(value, struct_path, field.name, field.go_type);
  };
  switch (field.kind) {
    case GoKind::kString:
      return value.is_string() ? absl::OkStatus() : wrong();
    case GoKind::kUint64:
      return value.is_number_unsigned() ? absl::OkStatus() : wrong();
    case GoKind::kBytes: {
      if (!value.is_string()) return wrong();
      std::string unused;
      return GoBase64Decode(value.get<std::string>(), &unused);
    }
    case GoKind::kStringSlice: {
      if (!value.is_array()) return wrong();
      const absl::string_view element = field.go_type.substr(2);  // "[]T" -> "T"
      for (const Json& item : value) {
        if (!item.is_null() && !item.is_string()) {
          return GoFieldTypeError(item, struct_path, field.name, element);
        }
      }
      return absl::OkStatus();
    }
    case GoKind::kAny:
    case GoKind::kNested:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

const Json* FindGoField(const Json& object, absl::string_view name) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (absl::EqualsIgnoreCase(it.key(), name)) return &it.value();
  }
  return nullptr;
}

absl::Status CheckGoFields(const Json& object, absl::string_view struct_path,
                           std::initializer_list<GoField> fields, bool strict,
                           const GoNestedCheck& nested) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const GoField* field = MatchField(it.key(), fields);
    if (field == nullptr) {
      if (!strict) continue;
      return absl::InvalidArgumentError(absl::StrCat("json: unknown field ", GoQuote(it.key())));
    }
    if (it.value().is_null()) continue;
    absl::Status status = field->kind == GoKind::kNested && nested != nullptr
                              ? nested(*field, it.value())
                              : CheckValue(it.value(), struct_path, *field);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

std::string GoJsonKind(const Json& value) {
  if (value.is_string()) return "string";
  if (value.is_number()) return "number";
  if (value.is_boolean()) return "bool";
  if (value.is_array()) return "array";
  if (value.is_object()) return "object";
  return "null";
}

absl::Status GoFieldTypeError(const Json& value, absl::string_view struct_path,
                              absl::string_view field, absl::string_view go_type) {
  std::string kind = GoJsonKind(value);
  // Go names the number when it is one that the integer type cannot hold (strconv failed).
  const bool integer_type = absl::StartsWith(go_type, "uint") || absl::StartsWith(go_type, "int");
  if (value.is_number() && integer_type) absl::StrAppend(&kind, " ", value.dump());
  return absl::InvalidArgumentError(absl::StrCat("json: cannot unmarshal ", kind,
                                                 " into Go struct field ", struct_path, ".", field,
                                                 " of type ", go_type));
}

absl::Status GoValueTypeError(const Json& value, absl::string_view go_type) {
  return absl::InvalidArgumentError(absl::StrCat("json: cannot unmarshal ", GoJsonKind(value),
                                                 " into Go value of type ", go_type));
}

}  // namespace registry::devserver
