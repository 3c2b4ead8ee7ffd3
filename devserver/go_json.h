// SPDX-License-Identifier: Apache-2.0
// devserver/go_json.h
//
// Go's encoding/json as Consul decodes request bodies with it, for the texts of its errors: the
// first problem in document order wins ("json: cannot unmarshal number into Go struct field
// .TTL of type string", `json: unknown field "x"`, "illegal base64 data at input byte 4"), and a
// body of nothing but whitespace is "EOF". The dev server parses JSON with nlohmann; these
// functions only say what Go would have said about it.
//
// Thread safety: pure functions.
#ifndef DEVSERVER_GO_JSON_H_
#define DEVSERVER_GO_JSON_H_

#include <functional>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace registry::devserver {

// What a Go struct field accepts.
enum class GoKind {
  kString,       // a JSON string
  kUint64,       // a non-negative integer
  kBytes,        // a base64 string ([]byte)
  kStringSlice,  // an array of strings; GoField::go_type is the slice type ("[]types.CheckID")
  kAny,          // interface{}: anything
  kNested,       // checked by the caller (an object or an array of objects)
};

struct GoField {
  absl::string_view name;  // the field's JSON name, matched ignoring case as Go does
  GoKind kind;
  absl::string_view go_type;  // the type as Go prints it: "string", "uint64", "[]uint8", ...
};

// The member of `object` that Go would decode into field `name` (the first whose key equals
// it ignoring case), or nullptr.
const nlohmann::ordered_json* FindGoField(const nlohmann::ordered_json& object,
                                          absl::string_view name);

// Checks the members of `object` in document order against `fields`; returns InvalidArgument
// with Go's text for the first that is wrong. Go names a field by `struct_path` "." name
// (`struct_path` "" gives ".TTL", "KVTxnOp.KV" gives "KVTxnOp.KV.Key"). With `strict` (Go's
// DisallowUnknownFields) a member that matches no field is `json: unknown field "<key>"`;
// otherwise it is ignored. A null member is never wrong. A kNested member is checked by
// `nested` (given the field and the member), in its turn.
using GoNestedCheck =
    std::function<absl::Status(const GoField& field, const nlohmann::ordered_json& value)>;
absl::Status CheckGoFields(const nlohmann::ordered_json& object, absl::string_view struct_path,
                           std::initializer_list<GoField> fields, bool strict,
                           const GoNestedCheck& nested = nullptr);

// Go's text for `value` where a field of `go_type` was expected: "json: cannot unmarshal
// <array|bool|number|object|string> into Go struct field <struct_path>.<field> of type
// <go_type>" (a number that does not fit an integer type is named: "number -1").
absl::Status GoFieldTypeError(const nlohmann::ordered_json& value, absl::string_view struct_path,
                              absl::string_view field, absl::string_view go_type);

// Go's text for a whole body of the wrong JSON type: "json: cannot unmarshal <kind> into Go
// value of type <go_type>".
absl::Status GoValueTypeError(const nlohmann::ordered_json& value, absl::string_view go_type);

// The JSON type of `value` as Go's errors name it: "string", "number", "bool", "array",
// "object" (or "null").
std::string GoJsonKind(const nlohmann::ordered_json& value);

// Reads `body` as Go's json.Decoder.Decode does (Consul decodes request bodies with it): returns
// the text of the first JSON value, leaving whatever follows it unread and unchecked, or
// InvalidArgument with Go's text: "EOF" for nothing but whitespace, "unexpected EOF" for input
// that ends inside the value, "invalid character 'x' <where>" for a syntax error
// (go_json_scan.cc).
absl::StatusOr<absl::string_view> GoFirstJsonValue(absl::string_view body);

// `json` (valid JSON) with every \u escape of a surrogate that is not half of a pair replaced by
// \ufffd, which is how Go decodes it.
std::string GoSurrogatesReplaced(absl::string_view json);

}  // namespace registry::devserver

#endif  // DEVSERVER_GO_JSON_H_
