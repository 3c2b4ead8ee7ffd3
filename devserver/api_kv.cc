// SPDX-License-Identifier: Apache-2.0
// Api: /v1/kv/<key> (Consul's KVSEndpoint, KVSGet, KVSGetKeys, KVSPut, KVSDelete).
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "devserver/api.h"
#include "devserver/api_util.h"
#include "devserver/go_compat.h"

namespace registry::devserver {
namespace {

constexpr absl::string_view kKvPrefix = "/v1/kv/";

// Consul's conflictingFlags: 400 naming the whole query when two exclusive flags are set.
std::optional<HttpResponse> ConflictingFlags(const HttpRequest& request,
                                             std::initializer_list<absl::string_view> flags) {
  int found = 0;
  for (absl::string_view flag : flags) found += request.Has(flag) ? 1 : 0;
  if (found < 2) return std::nullopt;
  return TextResponse(400, absl::StrCat("Conflicting flags: ", EncodeQuery(request.query)));
}

HttpResponse BoolResponse(bool value) { return JsonResponse(200, Json(value)); }

HttpResponse EmptyStatus(int status) {
  HttpResponse response;
  response.status = status;
  return response;
}

}  // namespace

ApiOutcome Api::HandleKv(const HttpRequest& request) {
  const std::string key = request.path.substr(kKvPrefix.size());
  const std::string& method = request.method;
  if (method == "GET") {
    stats_->Count("kv.get");
  } else if (method == "PUT") {
    stats_->Count("kv.put");
  } else if (method == "DELETE") {
    stats_->Count("kv.delete");
  } else {
    stats_->Count("kv.other");
    if (method == "OPTIONS") return OptionsResponse({"GET", "PUT", "DELETE"});
    return MethodNotAllowed(method, {"GET", "PUT", "DELETE"});
  }
  // Consul's parse() runs for every KV method before anything else.
  auto options = ParseQueryOptions(request);
  if (auto* error = std::get_if<HttpResponse>(&options)) return std::move(*error);
  if (method == "GET") return KvGet(request, key, std::get<QueryOptions>(options));
  if (method == "PUT") return KvPut(request, key);
  return KvDelete(request, key);
}

ApiOutcome Api::KvGet(const HttpRequest& request, const std::string& key,
                      const QueryOptions& options) {
  if (request.Has("keys")) {
    // Consul still honours its historic misspelling; the correct one wins.
    const std::string separator =
        request.Has("separator") ? request.Get("separator") : request.Get("seperator");
    bool filtered = false;
    if (auto refused = BeforeStoreCall(request, &filtered)) return std::move(*refused);
    return Read(options, WatchScope::Prefix(key), [this, key, separator, filtered] {
      QueryEvaluation evaluation;
      evaluation.epoch = store_->epoch();
      Store::KeysRead read = store_->Keys(key, separator);
      if (filtered) read.keys.clear();
      evaluation.index = std::max<uint64_t>(read.index, 1);
      evaluation.version = read.version;
      // No keys under a non-empty prefix is 404; the root answers [].
      evaluation.response = read.keys.empty() && !key.empty()
                                ? EmptyStatus(404)
                                : RawJsonResponse(200, StringsJson(read.keys));
      SetQueryMeta(&evaluation.response, evaluation.index);
      return evaluation;
    });
  }
  if (request.Has("recurse")) {
    bool filtered = false;
    if (auto refused = BeforeStoreCall(request, &filtered)) return std::move(*refused);
    return Read(options, WatchScope::Prefix(key), [this, key, filtered] {
      QueryEvaluation evaluation;
      evaluation.epoch = store_->epoch();
      // Serialized while listed: no copy of the entries (see Store::VisitList).
      std::string body = "[";
      const Store::ListSummary listed = store_->VisitList(key, [&body](const DirEntry& entry) {
        if (body.size() > 1) body.push_back(',');
        AppendDirEntryJson(entry, &body);
      });
      body.push_back(']');
      evaluation.index = std::max<uint64_t>(listed.index, 1);
      evaluation.version = listed.version;
      evaluation.response =
          listed.count == 0 || filtered ? EmptyStatus(404) : RawJsonResponse(200, std::move(body));
      SetQueryMeta(&evaluation.response, evaluation.index);
      return evaluation;
    });
  }
  if (key.empty()) return TextResponse(400, "Missing key name");
  if (auto refused = BeforeStoreCall(request)) return std::move(*refused);
  const bool raw = request.Has("raw");
  return Read(options, WatchScope::Key(key), [this, key, raw] {
    QueryEvaluation evaluation;
    evaluation.epoch = store_->epoch();
    Store::KeyRead read = store_->Get(key);
    evaluation.index = std::max<uint64_t>(read.index, 1);
    evaluation.version = read.version;
    if (!read.entry.has_value()) {
      evaluation.not_found = true;
      evaluation.response = EmptyStatus(404);
    } else if (raw) {
      // Consul's raw mode: the bare value, with headers that stop browsers sniffing it.
      evaluation.response.content_type = "text/plain";
      evaluation.response.body = read.entry->value;
      evaluation.response.headers.emplace_back("X-Content-Type-Options", "nosniff");
      evaluation.response.headers.emplace_back("Content-Security-Policy", "sandbox");
    } else {
      std::string body = "[";
      AppendDirEntryJson(*read.entry, &body);
      body.push_back(']');
      evaluation.response = RawJsonResponse(200, std::move(body));
    }
    SetQueryMeta(&evaluation.response, evaluation.index);
    return evaluation;
  });
}

HttpResponse Api::KvPut(const HttpRequest& request, const std::string& key) {
  if (key.empty()) return TextResponse(400, "Missing key name");
  if (auto conflict = ConflictingFlags(request, {"cas", "acquire", "release"})) return *conflict;
  KvOp op;
  op.verb = KvVerb::kSet;
  op.key = key;
  // Consul returns strconv's error as a plain (500) error for a non-numeric flags or cas.
  if (request.Has("flags")) {
    absl::StatusOr<uint64_t> flags = ParseGoUint(request.Get("flags"));
    if (!flags.ok()) return TextResponse(500, flags.status().message());
    op.flags = *flags;
  }
  if (request.Has("cas")) {
    absl::StatusOr<uint64_t> cas = ParseGoUint(request.Get("cas"));
    if (!cas.ok()) return TextResponse(500, cas.status().message());
    op.index = *cas;
    op.verb = KvVerb::kCas;
  }
  if (request.Has("acquire")) {
    op.session = request.Get("acquire");
    op.verb = KvVerb::kLock;
  }
  if (request.Has("release")) {
    op.session = request.Get("release");
    op.verb = KvVerb::kUnlock;
  }
  const uint64_t size = request.content_length.value_or(request.body.size());
  if (size > kMaxValueBytes || request.body.size() > kMaxValueBytes) {
    return BodyTooLarge(size, kMaxValueBytes, "kv_max_value_size");
  }
  if (auto refused = BeforeStoreCall(request)) return *refused;
  op.value = request.body;
  absl::StatusOr<bool> applied = store_->Apply(op);
  if (!applied.ok()) return TextResponse(500, applied.status().message());
  return BoolResponse(op.verb == KvVerb::kSet ? true : *applied);
}

HttpResponse Api::KvDelete(const HttpRequest& request, const std::string& key) {
  if (auto conflict = ConflictingFlags(request, {"recurse", "cas"})) return *conflict;
  KvOp op;
  op.verb = KvVerb::kDelete;
  op.key = key;
  if (request.Has("recurse")) {
    op.verb = KvVerb::kDeleteTree;
  } else if (key.empty()) {
    return TextResponse(400, "Missing key name");
  }
  if (request.Has("cas")) {
    absl::StatusOr<uint64_t> cas = ParseGoUint(request.Get("cas"));
    if (!cas.ok()) return TextResponse(500, cas.status().message());
    op.index = *cas;
    op.verb = KvVerb::kDeleteCas;
  }
  if (auto refused = BeforeStoreCall(request)) return *refused;
  absl::StatusOr<bool> applied = store_->Apply(op);
  if (!applied.ok()) return TextResponse(500, applied.status().message());
  return BoolResponse(op.verb == KvVerb::kDeleteCas ? *applied : true);
}

}  // namespace registry::devserver
