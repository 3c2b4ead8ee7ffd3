#include "integration/devserver/json_codec.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "integration/devserver/go_compat.h"

namespace registry::devserver {
namespace {

// Go's encoding/json matches object keys to struct fields case-insensitively; returns the
// value of the first key equal to `name` ignoring case, or nullptr.
const Json* FindField(const Json& object, absl::string_view name) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (absl::EqualsIgnoreCase(it.key(), name)) return &it.value();
  }
  return nullptr;
}

std::string TypeName(const Json& value) {
  if (value.is_string()) return "string";
  if (value.is_number()) return "number";
  if (value.is_boolean()) return "bool";
  if (value.is_array()) return "array";
  if (value.is_object()) return "object";
  return "null";
}

absl::Status WrongType(absl::string_view field, const Json& value, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("field '", field, "' expected type '", want, "', got '", TypeName(value), "'"));
}

absl::StatusOr<std::string> StringField(const Json& object, absl::string_view name,
                                        std::string fallback) {
  const Json* value = FindField(object, name);
  if (value == nullptr || value->is_null()) return fallback;
  if (!value->is_string()) return WrongType(name, *value, "string");
  return value->get<std::string>();
}

absl::StatusOr<uint64_t> UintField(const Json& object, absl::string_view name) {
  const Json* value = FindField(object, name);
  if (value == nullptr || value->is_null()) return uint64_t{0};
  if (value->is_number_unsigned()) return value->get<uint64_t>();
  if (value->is_number_integer() && value->get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value->get<int64_t>());
  }
  return WrongType(name, *value, "uint64");
}

absl::StatusOr<std::vector<std::string>> StringListField(const Json& value,
                                                         absl::string_view name) {
  std::vector<std::string> out;
  if (value.is_null()) return out;
  if (!value.is_array()) return WrongType(name, value, "[]string");
  for (const Json& item : value) {
    if (!item.is_string()) return WrongType(name, item, "string");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// Consul's FixupLockDelay: a duration string or a number of nanoseconds, where anything
// under 1000ns is taken to mean seconds.
absl::StatusOr<absl::Duration> LockDelayField(const Json& value) {
  absl::Duration delay;
  if (value.is_string()) {
    absl::StatusOr<absl::Duration> parsed = ParseGoDuration(value.get<std::string>());
    if (!parsed.ok()) return parsed.status();
    delay = *parsed;
  } else if (value.is_number()) {
    const double nanos = value.get<double>();
    if (!std::isfinite(nanos) || std::fabs(nanos) >= 9.2e18) {
      return absl::InvalidArgumentError(absl::StrCat("LockDelay ", value.dump(), " out of range"));
    }
    delay = absl::Nanoseconds(static_cast<int64_t>(nanos));
  } else {
    return WrongType("LockDelay", value, "duration");
  }
  if (delay < absl::Nanoseconds(1000)) delay = absl::Seconds(absl::ToInt64Nanoseconds(delay));
  return delay;
}

// Why `body`, which did not parse, is not JSON: Go's decoder says "unexpected EOF" for input
// that ends inside a value. Parsed again with exceptions, only to read the parser's reason; any
// of nlohmann's exceptions may come (a number beyond a double's range is out_of_range).
std::string JsonSyntaxError(absl::string_view body) {
  try {
    [[maybe_unused]] const Json unused = Json::parse(body.begin(), body.end());
  } catch (const Json::exception& error) {
    if (absl::StrContains(error.what(), "unexpected end of input")) return "unexpected EOF";
  }
  return "invalid JSON in request body";
}

// Go's strict decoding (DisallowUnknownFields), which Consul uses for txn bodies: a field that is
// none of `known` (matched ignoring case, as Go does) is an error naming it.
absl::Status RejectUnknownFields(const Json& object,
                                 std::initializer_list<absl::string_view> known) {
  for (const auto& [name, value] : object.items()) {
    if (std::none_of(known.begin(), known.end(), [&name = name](absl::string_view field) {
          return absl::EqualsIgnoreCase(name, field);
        })) {
      return absl::InvalidArgumentError(absl::StrCat("json: unknown field ", GoQuote(name)));
    }
  }
  return absl::OkStatus();
}

// Decodes one {"KV": {...}} operation; problems Consul reports per operation go to op.error.
absl::StatusOr<KvOp> DecodeTxnOp(const Json& raw) {
  KvOp op;
  if (!raw.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("json: cannot unmarshal ", TypeName(raw), " into Go value of type api.TxnOp"));
  }
  // Session ops and the Partition field are newer than Consul 1.8.7, which rejects them.
  if (absl::Status unknown =
          RejectUnknownFields(raw, {"KV", "Node", "Service", "Check", "Session"});
      !unknown.ok()) {
    return unknown;
  }
  const Json* kv = FindField(raw, "KV");
  if (kv == nullptr || kv->is_null()) {
    for (absl::string_view other : {"Node", "Service", "Check", "Session"}) {
      if (const Json* value = FindField(raw, other); value != nullptr && !value->is_null()) {
        op.error = absl::StrCat("the dev server supports only KV operations, not ", other);
        return op;
      }
    }
    op.error = "no operation specified";
    return op;
  }
  if (!kv->is_object()) return WrongType("KV", *kv, "object");
  if (absl::Status unknown = RejectUnknownFields(
          *kv, {"Verb", "Key", "Value", "Flags", "Index", "Session", "Namespace", "Partition"});
      !unknown.ok()) {
    return unknown;
  }
  absl::StatusOr<std::string> verb = StringField(*kv, "Verb", "");
  if (!verb.ok()) return verb.status();
  absl::StatusOr<std::string> key = StringField(*kv, "Key", "");
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> session = StringField(*kv, "Session", "");
  if (!session.ok()) return session.status();
  absl::StatusOr<uint64_t> flags = UintField(*kv, "Flags");
  if (!flags.ok()) return flags.status();
  absl::StatusOr<uint64_t> index = UintField(*kv, "Index");
  if (!index.ok()) return index.status();
  op.key = *std::move(key);
  op.session = *std::move(session);
  op.flags = *flags;
  op.index = *index;
  if (const Json* value = FindField(*kv, "Value"); value != nullptr && !value->is_null()) {
    if (!value->is_string()) return WrongType("Value", *value, "string");
    if (!absl::Base64Unescape(value->get<std::string>(), &op.value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to decode value: illegal base64 data for key ", GoQuote(op.key)));
    }
  }
  absl::StatusOr<KvVerb> parsed = ParseKvVerb(*verb);
  if (parsed.ok()) {
    op.verb = *parsed;
  } else {
    op.error = std::string(parsed.status().message());
  }
  return op;
}

}  // namespace

void AppendDirEntryJson(const DirEntry& entry, std::string* out) {
  absl::StrAppend(out, "{\"LockIndex\":", entry.lock_index, ",\"Key\":");
  AppendGoJsonString(entry.key, out);
  absl::StrAppend(out, ",\"Flags\":", entry.flags, ",\"Value\":");
  if (entry.value.empty()) {
    out->append("null");
  } else {
    absl::StrAppend(out, "\"", absl::Base64Escape(entry.value), "\"");
  }
  if (!entry.session.empty()) {
    out->append(",\"Session\":");
    AppendGoJsonString(entry.session, out);
  }
  absl::StrAppend(out, ",\"CreateIndex\":", entry.create_index,
                  ",\"ModifyIndex\":", entry.modify_index, "}");
}

std::string StringsJson(const std::vector<std::string>& strings) {
  std::string out = "[";
  for (const std::string& text : strings) {
    if (out.size() > 1) out.push_back(',');
    AppendGoJsonString(text, &out);
  }
  out.push_back(']');
  return out;
}

Json SessionJson(const SessionEntry& session) {
  Json out;
  out["ID"] = session.id;
  out["Name"] = session.name;
  out["Node"] = session.node;
  out["LockDelay"] = absl::ToInt64Nanoseconds(session.lock_delay);
  out["Behavior"] = session.behavior == SessionBehavior::kDelete ? "delete" : "release";
  out["TTL"] = session.ttl;
  out["NodeChecks"] = session.node_checks.empty() ? Json::array() : Json(session.node_checks);
  if (session.service_checks.empty()) {
    out["ServiceChecks"] = nullptr;
  } else {
    Json checks = Json::array();
    for (const ServiceCheck& check : session.service_checks) {
      checks.push_back(Json{{"ID", check.id}, {"Namespace", check.name_space}});
    }
    out["ServiceChecks"] = std::move(checks);
  }
  out["CreateIndex"] = session.create_index;
  out["ModifyIndex"] = session.modify_index;
  return out;
}

absl::StatusOr<NodeRegistration> DecodeCatalogRegister(absl::string_view body) {
  Json raw = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (raw.is_discarded()) return absl::InvalidArgumentError(JsonSyntaxError(body));
  if (raw.is_null()) return NodeRegistration{};
  if (!raw.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("json: cannot unmarshal ", TypeName(raw),
                     " into Go value of type structs.RegisterRequest"));
  }
  if (absl::Status unknown = RejectUnknownFields(
          raw, {"Datacenter", "ID", "Node", "Address", "TaggedAddresses", "NodeMeta", "Service",
                "Check", "Checks", "SkipNodeUpdate", "Token", "Namespace"});
      !unknown.ok()) {
    return unknown;
  }
  absl::StatusOr<std::string> node = StringField(raw, "Node", "");
  if (!node.ok()) return node.status();
  absl::StatusOr<std::string> address = StringField(raw, "Address", "");
  if (!address.ok()) return address.status();
  return NodeRegistration{*std::move(node), *std::move(address)};
}

absl::StatusOr<SessionCreateRequest> DecodeSessionCreate(absl::string_view body,
                                                         SessionCreateRequest defaults) {
  Json raw = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (raw.is_discarded()) return absl::InvalidArgumentError(JsonSyntaxError(body));
  if (raw.is_null()) return defaults;
  if (!raw.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("expected a map, got '", TypeName(raw), "'"));
  }
  SessionCreateRequest request = std::move(defaults);
  absl::StatusOr<std::string> name = StringField(raw, "Name", request.name);
  if (!name.ok()) return name.status();
  absl::StatusOr<std::string> node = StringField(raw, "Node", request.node);
  if (!node.ok()) return node.status();
  absl::StatusOr<std::string> behavior = StringField(raw, "Behavior", request.behavior);
  if (!behavior.ok()) return behavior.status();
  absl::StatusOr<std::string> ttl = StringField(raw, "TTL", request.ttl);
  if (!ttl.ok()) return ttl.status();
  request.name = *std::move(name);
  request.node = *std::move(node);
  request.behavior = *std::move(behavior);
  request.ttl = *std::move(ttl);
  if (const Json* delay = FindField(raw, "LockDelay"); delay != nullptr && !delay->is_null()) {
    absl::StatusOr<absl::Duration> parsed = LockDelayField(*delay);
    if (!parsed.ok()) return parsed.status();
    request.lock_delay = *parsed;
  }

  const Json* checks = FindField(raw, "Checks");
  const Json* node_checks = FindField(raw, "NodeChecks");
  const Json* service_checks = FindField(raw, "ServiceChecks");
  if (checks != nullptr || node_checks != nullptr || service_checks != nullptr) {
    request.node_checks.clear();  // Consul's FixupChecks: explicit lists replace the default
  }
  for (const auto& [field, name] : {std::pair{checks, "Checks"}, {node_checks, "NodeChecks"}}) {
    if (field == nullptr) continue;
    absl::StatusOr<std::vector<std::string>> list = StringListField(*field, name);
    if (!list.ok()) return list.status();
    for (std::string& check : *list) {
      if (std::find(request.node_checks.begin(), request.node_checks.end(), check) ==
          request.node_checks.end()) {
        request.node_checks.push_back(std::move(check));
      }
    }
  }
  if (service_checks != nullptr && !service_checks->is_null()) {
    if (!service_checks->is_array()) return WrongType("ServiceChecks", *service_checks, "array");
    for (const Json& item : *service_checks) {
      if (!item.is_object()) return WrongType("ServiceChecks", item, "object");
      absl::StatusOr<std::string> id = StringField(item, "ID", "");
      if (!id.ok()) return id.status();
      absl::StatusOr<std::string> name_space = StringField(item, "Namespace", "");
      if (!name_space.ok()) return name_space.status();
      request.service_checks.push_back({*std::move(id), *std::move(name_space)});
    }
  }
  return request;
}

absl::StatusOr<std::vector<KvOp>> DecodeTxnOps(absl::string_view body) {
  if (body.empty()) return absl::InvalidArgumentError("EOF");
  Json raw = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (raw.is_discarded()) return absl::InvalidArgumentError(JsonSyntaxError(body));
  std::vector<KvOp> ops;
  if (raw.is_null()) return ops;
  if (!raw.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("json: cannot unmarshal ", TypeName(raw),
                                                   " into Go value of type api.TxnOps"));
  }
  if (raw.size() > kMaxTxnOps) {
    return absl::ResourceExhaustedError(absl::StrCat("Transaction contains too many operations (",
                                                     raw.size(), " > ", kMaxTxnOps, ")"));
  }
  for (const Json& item : raw) {
    absl::StatusOr<KvOp> op = DecodeTxnOp(item);
    if (!op.ok()) return op.status();
    if (op->value.size() > kMaxValueBytes) {
      return absl::ResourceExhaustedError(absl::StrCat("Value for key ", GoQuote(op->key),
                                                       " is too large (", op->value.size(), " > ",
                                                       kMaxValueBytes, " bytes)"));
    }
    ops.push_back(*std::move(op));
  }
  return ops;
}

}  // namespace registry::devserver
