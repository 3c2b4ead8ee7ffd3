// SPDX-License-Identifier: Apache-2.0
// Api: /v1/session/{create,destroy,renew,info,node,list} (Consul's session_endpoint.go).
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "devserver/api.h"
#include "devserver/api_util.h"
#include "devserver/go_compat.h"

namespace registry::devserver {
namespace {

constexpr absl::string_view kSessionPrefix = "/v1/session/";

// Consul's state store looks a session up by a UUID index, which refuses an ID that is not a
// UUID (go-memdb's message); the lookup comes after the token is resolved but before any
// permission check. Returns that error's text, or nullopt for an ID of UUID shape.
std::optional<std::string> SessionLookupError(const std::string& id) {
  absl::Status uuid = CheckMemdbUuid(id);
  if (uuid.ok()) return std::nullopt;
  return absl::StrCat("failed session lookup: ", uuid.message());
}

Json SessionsJson(const std::vector<SessionEntry>& sessions) {
  Json out = Json::array();  // Consul answers [] rather than null
  for (const SessionEntry& session : sessions) out.push_back(SessionJson(session));
  return out;
}

}  // namespace

ApiOutcome Api::HandleSession(const HttpRequest& request) {
  const absl::string_view rest = absl::string_view(request.path).substr(kSessionPrefix.size());
  const size_t slash = rest.find('/');
  const absl::string_view verb = rest.substr(0, slash);
  // create and list are exact paths; the others take the rest of the path as their argument.
  const bool takes_argument =
      verb == "destroy" || verb == "renew" || verb == "info" || verb == "node";
  const bool exact = verb == "create" || verb == "list";
  if ((exact && slash != absl::string_view::npos) ||
      (takes_argument && slash == absl::string_view::npos) || (!exact && !takes_argument)) {
    stats_->Count("other");
    HttpResponse not_found;  // no handler is registered for the path: Go's ServeMux answers
    not_found.status = 404;
    not_found.outside_handlers = true;
    return not_found;
  }
  const std::string argument = takes_argument ? std::string(rest.substr(slash + 1)) : std::string();
  stats_->Count(absl::StrCat("session.", verb));

  const bool is_write = verb == "create" || verb == "destroy" || verb == "renew";
  const absl::string_view allowed = is_write ? "PUT" : "GET";
  if (request.method == "OPTIONS") return OptionsResponse({allowed});
  if (request.method != allowed) return MethodNotAllowed(request.method, {allowed});

  if (verb == "create") return SessionCreate(request);
  if (verb == "destroy") {
    if (argument.empty()) return TextResponse(400, "Missing session");
    if (auto refused = BeforeSessionWrite(request, argument, "Session lookup failed: ")) {
      return std::move(*refused);
    }
    store_->DestroySession(argument);  // Consul answers true even for unknown ids
    return JsonResponse(200, Json(true));
  }

  auto options = ParseQueryOptions(request);
  if (auto* error = std::get_if<HttpResponse>(&options)) return std::move(*error);
  const QueryOptions& query = std::get<QueryOptions>(options);
  if (verb == "renew") {
    if (argument.empty()) return TextResponse(400, "Missing session");
    if (auto refused = BeforeSessionWrite(request, argument, "")) return std::move(*refused);
    std::optional<SessionEntry> renewed = store_->RenewSession(argument);
    if (!renewed.has_value()) {
      return TextResponse(404, absl::StrCat("Session id '", argument, "' not found"));
    }
    return JsonResponse(200, SessionsJson({*renewed}));
  }
  if (verb == "info" && argument.empty()) return TextResponse(400, "Missing session");
  if (verb == "node" && argument.empty()) return TextResponse(400, "Missing node name");
  bool filtered = false;
  // Consul's session reads write the (zero) query meta even when their RPC fails: an unknown
  // token, a foreign datacenter, no leader.
  if (auto refused = BeforeStoreCall(request, &filtered)) {
    SetFailedQueryMeta(&*refused);
    return std::move(*refused);
  }
  if (verb == "info") {
    if (std::optional<std::string> error = SessionLookupError(argument)) {
      HttpResponse failed = TextResponse(500, *error);
      SetFailedQueryMeta(&failed);
      return failed;
    }
  }

  const std::string kind(verb);
  return Read(query, WatchScope::Sessions(), [this, kind, argument, filtered] {
    QueryEvaluation evaluation;
    evaluation.epoch = store_->epoch();
    Store::SessionsRead read = kind == "info"   ? store_->GetSession(argument)
                               : kind == "node" ? store_->NodeSessions(argument)
                                                : store_->ListSessions();
    if (filtered) read.sessions.clear();
    evaluation.index = std::max<uint64_t>(read.index, 1);
    evaluation.version = read.version;
    evaluation.response = JsonResponse(200, SessionsJson(read.sessions));
    SetQueryMeta(&evaluation.response, evaluation.index);
    return evaluation;
  });
}

std::optional<HttpResponse> Api::BeforeSessionWrite(const HttpRequest& request,
                                                    const std::string& id,
                                                    absl::string_view error_prefix) const {
  bool anonymous = false;
  if (auto refused = BeforeStoreCall(request, &anonymous)) return refused;
  if (std::optional<std::string> error = SessionLookupError(id)) {
    return TextResponse(500, absl::StrCat(error_prefix, *error));
  }
  if (anonymous) return TextResponse(403, "Permission denied");
  return std::nullopt;
}

HttpResponse Api::SessionCreate(const HttpRequest& request) {
  SessionCreateRequest defaults;
  defaults.node = config_.node_name;
  SessionCreateRequest create = defaults;
  if (request.content_length.value_or(0) > 0 || !request.body.empty()) {
    absl::StatusOr<SessionCreateRequest> decoded = DecodeSessionCreate(request.body, defaults);
    if (!decoded.ok()) {
      return TextResponse(400, absl::StrCat("Request decode failed: ", decoded.status().message()));
    }
    create = *std::move(decoded);
  }
  if (auto refused = BeforeStoreCall(request)) return *refused;
  absl::StatusOr<std::string> id = store_->CreateSession(create);
  if (!id.ok()) return TextResponse(500, id.status().message());
  return JsonResponse(200, Json{{"ID", *id}});
}

}  // namespace registry::devserver
