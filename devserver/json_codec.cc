// SPDX-License-Identifier: Apache-2.0
#include "devserver/json_codec.h"

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
#include "devserver/go_compat.h"
#include "devserver/go_json.h"

namespace registry::devserver {
namespace {

// The first JSON value of `body`, read as Go's json.Decoder reads it (go_json.h): syntax errors
// in Go's words, and anything after a complete value ignored.
absl::StatusOr<Json> ParseBody(absl::string_view body) {
  absl::StatusOr<absl::string_view> value = GoFirstJsonValue(body);
  if (!value.ok()) return value.status();
  // Go decodes a \u escape of a lone surrogate as U+FFFD; nlohmann refuses it.
  const std::string text = GoSurrogatesReplaced(*value);
  Json raw = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  // Valid JSON to Go; nlohmann refuses only a number beyond a double's range.
  if (raw.is_discarded()) return absl::InvalidArgumentError("number out of range");
  return raw;
}

// The members a field's Go type checks (go_json.h) have let through.
std::string StringOr(const Json& object, absl::string_view name, std::string fallback) {
  const Json* value = FindGoField(object, name);
  return value == nullptr || value->is_null() ? fallback : value->get<std::string>();
}

uint64_t UintOr(const Json& object, absl::string_view name) {
  const Json* value = FindGoField(object, name);
  return value == nullptr || value->is_null() ? 0 : value->get<uint64_t>();
}

std::vector<std::string> Strings(const Json& list) {
  std::vector<std::string> out;
  if (list.is_null()) return out;
  for (const Json& item : list) out.push_back(item.is_null() ? "" : item.get<std::string>());
  return out;
}

// Consul's FixupLockDelay: a duration string or a number of nanoseconds, where anything
// under 1000ns is taken to mean seconds; any other JSON value is a zero delay.
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
    return absl::ZeroDuration();
  }
  if (delay < absl::Nanoseconds(1000)) delay = absl::Seconds(absl::ToInt64Nanoseconds(delay));
  return delay;
}

// Go's checks of a session create body, in document order: Consul decodes it into
// struct { LockDelay interface{}; *structs.Alias }, an alias of structs.Session.
absl::Status CheckSessionBody(const Json& raw) {
  if (!raw.is_object()) {
    return GoValueTypeError(raw, "struct { LockDelay interface {}; *structs.Alias }");
  }
  return CheckGoFields(
      raw, "",
      {{"ID", GoKind::kString, "string"},
       {"Name", GoKind::kString, "string"},
       {"Node", GoKind::kString, "string"},
       {"Checks", GoKind::kStringSlice, "[]types.CheckID"},
       {"NodeChecks", GoKind::kStringSlice, "[]string"},
       {"ServiceChecks", GoKind::kNested, "[]structs.ServiceCheck"},
       {"LockDelay", GoKind::kAny, "interface {}"},
       {"Behavior", GoKind::kString, "structs.SessionBehavior"},
       {"TTL", GoKind::kString, "string"},
       {"CreateIndex", GoKind::kUint64, "uint64"},
       {"ModifyIndex", GoKind::kUint64, "uint64"}},
      /*strict=*/false, [](const GoField& field, const Json& value) {
        if (!value.is_array()) return GoFieldTypeError(value, "", field.name, field.go_type);
        for (const Json& item : value) {
          if (item.is_null()) continue;
          if (!item.is_object()) {
            return GoFieldTypeError(item, "", field.name, "structs.ServiceCheck");
          }
          absl::Status status = CheckGoFields(
              item, "ServiceCheck.ServiceChecks",
              {{"ID", GoKind::kString, "string"}, {"Namespace", GoKind::kString, "string"}},
              /*strict=*/false);
          if (!status.ok()) return status;
        }
        return absl::OkStatus();
      });
}

// Go's strict checks of one txn operation (Consul's api.TxnOp), in document order. Session ops
// and the Partition field are newer than Consul 1.8.7, which rejects them as unknown fields.
absl::Status CheckTxnOp(const Json& raw) {
  if (!raw.is_object()) return GoValueTypeError(raw, "api.TxnOp");
  const auto kv_op = [](const GoField& field, const Json& value) {
    if (!value.is_object()) return GoFieldTypeError(value, "TxnOp", field.name, field.go_type);
    if (field.name != "KV") return absl::OkStatus();  // refused per operation later
    return CheckGoFields(value, "KVTxnOp.KV",
                         {{"Verb", GoKind::kString, "api.KVOp"},
                          {"Key", GoKind::kString, "string"},
                          {"Value", GoKind::kBytes, "[]uint8"},
                          {"Flags", GoKind::kUint64, "uint64"},
                          {"Index", GoKind::kUint64, "uint64"},
                          {"Session", GoKind::kString, "string"},
                          {"Namespace", GoKind::kString, "string"},
                          {"Partition", GoKind::kString, "string"}},
                         /*strict=*/true);
  };
  return CheckGoFields(raw, "TxnOp",
                       {{"KV", GoKind::kNested, "api.KVTxnOp"},
                        {"Node", GoKind::kNested, "api.NodeTxnOp"},
                        {"Service", GoKind::kNested, "api.ServiceTxnOp"},
                        {"Check", GoKind::kNested, "api.CheckTxnOp"},
                        {"Session", GoKind::kNested, "api.SessionTxnOp"}},
                       /*strict=*/true, kv_op);
}

// Decodes one {"KV": {...}} operation; problems Consul reports per operation go to op.error.
// An operation naming no kind at all is skipped (nullopt), as Consul's conversion skips it.
absl::StatusOr<std::optional<KvOp>> DecodeTxnOp(const Json& raw) {
  if (absl::Status status = CheckTxnOp(raw); !status.ok()) return status;
  KvOp op;
  const Json* kv = FindGoField(raw, "KV");
  if (kv == nullptr || kv->is_null()) {
    for (absl::string_view other : {"Node", "Service", "Check", "Session"}) {
      if (const Json* value = FindGoField(raw, other); value != nullptr && !value->is_null()) {
        op.error = absl::StrCat("the dev server supports only KV operations, not ", other);
        return op;
      }
    }
    return std::nullopt;
  }
  op.key = StringOr(*kv, "Key", "");
  op.session = StringOr(*kv, "Session", "");
  op.flags = UintOr(*kv, "Flags");
  op.index = UintOr(*kv, "Index");
  if (absl::Status value = GoBase64Decode(StringOr(*kv, "Value", ""), &op.value); !value.ok()) {
    return value;
  }
  absl::StatusOr<KvVerb> parsed = ParseKvVerb(StringOr(*kv, "Verb", ""));
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
  absl::StatusOr<Json> parsed = ParseBody(body);
  if (!parsed.ok()) return parsed.status();
  const Json& raw = *parsed;
  if (raw.is_null()) return NodeRegistration{};
  if (!raw.is_object()) return GoValueTypeError(raw, "structs.RegisterRequest");
  absl::Status checked =
      CheckGoFields(raw, "RegisterRequest",
                    {{"Datacenter", GoKind::kString, "string"},
                     {"ID", GoKind::kString, "types.NodeID"},
                     {"Node", GoKind::kString, "string"},
                     {"Address", GoKind::kString, "string"},
                     {"TaggedAddresses", GoKind::kAny, ""},
                     {"NodeMeta", GoKind::kAny, ""},
                     {"Service", GoKind::kNested, "structs.NodeService"},
                     {"Check", GoKind::kAny, ""},
                     {"Checks", GoKind::kAny, ""},
                     {"SkipNodeUpdate", GoKind::kAny, ""},
                     {"Token", GoKind::kString, "string"},
                     {"Namespace", GoKind::kString, "string"}},
                    /*strict=*/true, [](const GoField& field, const Json& value) {
                      if (value.is_object()) return absl::OkStatus();  // services are not kept
                      return GoFieldTypeError(value, "RegisterRequest", field.name, field.go_type);
                    });
  if (!checked.ok()) return checked;
  return NodeRegistration{StringOr(raw, "Node", ""), StringOr(raw, "Address", "")};
}

absl::StatusOr<SessionCreateRequest> DecodeSessionCreate(absl::string_view body,
                                                         SessionCreateRequest defaults) {
  absl::StatusOr<Json> parsed = ParseBody(body);
  if (!parsed.ok()) return parsed.status();
  const Json& raw = *parsed;
  if (raw.is_null()) return defaults;
  if (absl::Status checked = CheckSessionBody(raw); !checked.ok()) return checked;
  SessionCreateRequest request = std::move(defaults);
  request.name = StringOr(raw, "Name", request.name);
  request.node = StringOr(raw, "Node", request.node);
  request.behavior = StringOr(raw, "Behavior", request.behavior);
  request.ttl = StringOr(raw, "TTL", request.ttl);
  if (const Json* delay = FindGoField(raw, "LockDelay"); delay != nullptr && !delay->is_null()) {
    absl::StatusOr<absl::Duration> parsed = LockDelayField(*delay);
    if (!parsed.ok()) return parsed.status();
    request.lock_delay = *parsed;
  }

  const Json* checks = FindGoField(raw, "Checks");
  const Json* node_checks = FindGoField(raw, "NodeChecks");
  const Json* service_checks = FindGoField(raw, "ServiceChecks");
  if (checks != nullptr || node_checks != nullptr || service_checks != nullptr) {
    request.node_checks.clear();  // Consul's FixupChecks: explicit lists replace the default
  }
  for (const Json* list : {checks, node_checks}) {
    if (list == nullptr) continue;
    for (std::string& check : Strings(*list)) {
      if (std::find(request.node_checks.begin(), request.node_checks.end(), check) ==
          request.node_checks.end()) {
        request.node_checks.push_back(std::move(check));
      }
    }
  }
  if (service_checks != nullptr && !service_checks->is_null()) {
    for (const Json& item : *service_checks) {
      if (item.is_null()) continue;
      request.service_checks.push_back({StringOr(item, "ID", ""), StringOr(item, "Namespace", "")});
    }
  }
  return request;
}

absl::StatusOr<std::vector<KvOp>> DecodeTxnOps(absl::string_view body) {
  absl::StatusOr<Json> parsed = ParseBody(body);
  if (!parsed.ok()) return parsed.status();
  const Json& raw = *parsed;
  std::vector<KvOp> ops;
  if (raw.is_null()) return ops;
  if (!raw.is_array()) return GoValueTypeError(raw, "api.TxnOps");
  if (raw.size() > kMaxTxnOps) {
    return absl::ResourceExhaustedError(absl::StrCat("Transaction contains too many operations (",
                                                     raw.size(), " > ", kMaxTxnOps, ")"));
  }
  for (const Json& item : raw) {
    if (item.is_null()) continue;  // Consul 1.8.7 fails on it (a nil operation); skipped here
    absl::StatusOr<std::optional<KvOp>> op = DecodeTxnOp(item);
    if (!op.ok()) return op.status();
    if (!op->has_value()) continue;
    if ((*op)->value.size() > kMaxValueBytes) {
      return absl::ResourceExhaustedError(absl::StrCat("Value for key ", GoQuote((*op)->key),
                                                       " is too large (", (*op)->value.size(),
                                                       " > ", kMaxValueBytes, " bytes)"));
    }
    ops.push_back(**std::move(op));
  }
  return ops;
}

}  // namespace registry::devserver
