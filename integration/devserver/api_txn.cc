// Api: /v1/txn (Consul's txn_endpoint.go, KV operations only).
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "integration/devserver/api.h"
#include "integration/devserver/api_util.h"

namespace registry::devserver {

HttpResponse Api::HandleTxn(const HttpRequest& request) {
  stats_->Count("txn");
  if (request.method == "OPTIONS") return OptionsResponse({"PUT"});
  if (request.method != "PUT") return MethodNotAllowed(request.method, {"PUT"});
  const uint64_t size = request.content_length.value_or(request.body.size());
  if (size > kMaxTxnBytes || request.body.size() > kMaxTxnBytes) {
    return TextResponse(413,
                        absl::StrCat("Request body too large, max size: ", kMaxTxnBytes, " bytes"));
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
  if (auto refused = BeforeStoreCall(request)) return *refused;

  TxnOutcome outcome = store_->Txn(*ops);
  Json body;
  if (outcome.errors.empty()) {
    Json results = Json::array();
    for (const DirEntry& entry : outcome.results)
      results.push_back(Json{{"KV", DirEntryJson(entry)}});
    body["Results"] = std::move(results);
    body["Errors"] = nullptr;
  } else {
    Json errors = Json::array();
    for (const TxnError& error : outcome.errors) {
      errors.push_back(Json{{"OpIndex", error.op_index}, {"What", error.what}});
    }
    body["Results"] = nullptr;
    body["Errors"] = std::move(errors);
  }
  if (!writes) {
    body["Index"] = 0;
    body["LastContact"] = 0;
    body["KnownLeader"] = true;
  }
  HttpResponse response = JsonResponse(outcome.errors.empty() ? 200 : 409, body);
  if (!writes) {
    response.headers.emplace_back("X-Consul-KnownLeader", "true");
    response.headers.emplace_back("X-Consul-LastContact", "0");
  }
  return response;
}

}  // namespace registry::devserver
