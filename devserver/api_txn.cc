// SPDX-License-Identifier: Apache-2.0
// Api: /v1/txn (Consul's txn_endpoint.go, KV operations only).
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "devserver/api.h"
#include "devserver/api_util.h"
#include "devserver/go_compat.h"

namespace registry::devserver {
namespace {

// A rollback naming every op that the anonymous token may not run: all but get and get-tree.
TxnOutcome RefuseAllButReads(const std::vector<KvOp>& ops) {
  TxnOutcome outcome;
  for (size_t i = 0; i < ops.size(); ++i) {
    const KvVerb verb = ops[i].verb;
    const bool read =
        verb == KvVerb::kGet || verb == KvVerb::kGetOrEmpty || verb == KvVerb::kGetTree;
    if (ops[i].error.empty() && !read) {
      outcome.errors.push_back({static_cast<int>(i), "Permission denied"});
    }
  }
  return outcome;
}

}  // namespace

std::optional<HttpResponse> Api::RefuseOversizedBody(const HttpRequest& request) const {
  if (request.method != "PUT" || !request.content_length.has_value()) return std::nullopt;
  if (absl::StartsWith(request.path, "/v1/kv/")) {
    stats_->Count("kv.put");
    return BodyTooLarge(*request.content_length, kMaxValueBytes, "kv_max_value_size");
  }
  if (request.path == "/v1/txn") {
    stats_->Count("txn");
    return BodyTooLarge(*request.content_length, kMaxTxnBytes, "txn_max_req_len");
  }
  return std::nullopt;
}

HttpResponse Api::HandleTxn(const HttpRequest& request) {
  stats_->Count("txn");
  if (request.method == "OPTIONS") return OptionsResponse({"PUT"});
  if (request.method != "PUT") return MethodNotAllowed(request.method, {"PUT"});
  const uint64_t size = request.content_length.value_or(request.body.size());
  if (size > kMaxTxnBytes || request.body.size() > kMaxTxnBytes) {
    return BodyTooLarge(size, kMaxTxnBytes, "txn_max_req_len");
  }
  absl::StatusOr<std::vector<KvOp>> ops = DecodeTxnOps(request.body);
  if (!ops.ok()) {
    if (ops.status().code() == absl::StatusCode::kResourceExhausted) {
      return TextResponse(413, ops.status().message());
    }
    return TextResponse(400, absl::StrCat("Failed to parse body: ", ops.status().message()));
  }
  bool writes = false;
  for (const KvOp& op : *ops) writes = writes || (op.error.empty() && IsWriteVerb(op.verb));
  // Read-only transactions take Consul's Txn.Read path: consistency options apply and the
  // answer carries query meta, but they never block.
  if (!writes) {
    auto options = ParseQueryOptions(request);
    if (auto* error = std::get_if<HttpResponse>(&options)) return std::move(*error);
  }
  bool filtered = false;
  if (auto refused = BeforeStoreCall(request, &filtered)) return *refused;

  // Consul checks every op but get and get-tree against the token before applying anything (a
  // rollback naming each refused op); what gets read is filtered out afterwards.
  TxnOutcome outcome = filtered ? RefuseAllButReads(*ops) : TxnOutcome{};
  if (outcome.errors.empty()) outcome = store_->Txn(*ops);
  if (filtered && outcome.errors.empty()) outcome.results.clear();
  // Written directly, like KV reads (AppendDirEntryJson): Go's field order, Go's strings.
  std::string body = "{\"Results\":";
  if (outcome.errors.empty()) {
    body.push_back('[');
    for (size_t i = 0; i < outcome.results.size(); ++i) {
      body.append(i == 0 ? "{\"KV\":" : ",{\"KV\":");
      AppendDirEntryJson(outcome.results[i], &body);
      body.push_back('}');
    }
    body.append("],\"Errors\":null");
  } else {
    body.append("null,\"Errors\":[");
    for (size_t i = 0; i < outcome.errors.size(); ++i) {
      absl::StrAppend(&body, i == 0 ? "" : ",", "{\"OpIndex\":", outcome.errors[i].op_index,
                      ",\"What\":");
      AppendGoJsonString(outcome.errors[i].what, &body);
      body.push_back('}');
    }
    body.push_back(']');
  }
  if (!writes) {
    body.append(",\"Index\":0,\"LastContact\":0,\"KnownLeader\":true,\"ConsistencyLevel\":\"\"");
  }
  body.push_back('}');
  HttpResponse response = RawJsonResponse(outcome.errors.empty() ? 200 : 409, std::move(body));
  if (!writes) {
    response.headers.emplace_back("X-Consul-Knownleader", "true");
    response.headers.emplace_back("X-Consul-Lastcontact", "0");
  }
  return response;
}

}  // namespace registry::devserver
