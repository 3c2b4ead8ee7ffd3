// SPDX-License-Identifier: Apache-2.0
#include "consul/session.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/limits.h"
#include "base/status_macros.h"
#include "consul/errors.h"
#include "consul/json_util.h"
#include "consul/url.h"
#include "nlohmann/json.hpp"

namespace registry::consul {
namespace {

// "15s" for whole seconds, otherwise whole milliseconds ("1500ms", at least "1ms").
std::string FormatSessionDuration(absl::Duration duration) {
  if (duration <= absl::ZeroDuration()) return "0s";
  if (duration % absl::Seconds(1) == absl::ZeroDuration()) {
    return absl::StrCat(absl::ToInt64Seconds(duration), "s");
  }
  return FormatWait(duration);
}

absl::StatusOr<HttpRequest> SessionIdRequest(HttpMethod method, absl::string_view endpoint,
                                             absl::string_view id) {
  if (id.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("consul session ", endpoint, ": empty id"));
  }
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat("consul session ", endpoint, ": id '",
                                                     absl::CHexEscape(id),
                                                     "' contains control characters"));
    }
  }
  HttpRequest request;
  request.method = method;
  request.path = absl::StrCat("/v1/session/", endpoint, "/", EscapeComponent(id));
  return request;
}

absl::StatusOr<std::vector<std::string>> CheckIds(const nlohmann::json& object, const char* field,
                                                  absl::string_view what) {
  std::vector<std::string> ids;
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return ids;
  if (!it->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": \"", field, "\" is not an array"));
  }
  for (const nlohmann::json& check : *it) {
    if (check.is_string()) {
      ids.push_back(check.get<std::string>());  // NodeChecks / legacy Checks: plain ids
    } else {
      // ServiceChecks: {"ID": "...", "Namespace": "..."}
      RETURN_IF_ERROR(ExpectObject(check, absl::StrCat(what, " \"", field, "\" item")));
      ASSIGN_OR_RETURN(std::string id, RequiredString(check, "ID", what));
      ids.push_back(std::move(id));
    }
  }
  return ids;
}

absl::StatusOr<SessionInfo> SessionFromJson(const nlohmann::json& object, absl::string_view what) {
  RETURN_IF_ERROR(ExpectObject(object, what));
  SessionInfo info;
  ASSIGN_OR_RETURN(info.id, RequiredString(object, "ID", what));
  std::string named = absl::StrCat(what, " (id '", absl::CHexEscape(info.id), "')");
  ASSIGN_OR_RETURN(std::optional<std::string> name, OptionalString(object, "Name", named));
  info.name = name.value_or("");
  ASSIGN_OR_RETURN(std::optional<std::string> node, OptionalString(object, "Node", named));
  info.node = node.value_or("");
  ASSIGN_OR_RETURN(std::optional<std::string> behavior, OptionalString(object, "Behavior", named));
  const std::string behavior_name = behavior.value_or("");
  if (behavior_name == "delete") {
    info.behavior = SessionBehavior::kDelete;
  } else if (!behavior_name.empty() && behavior_name != "release") {
    return absl::InvalidArgumentError(
        absl::StrCat(named, ": unknown Behavior '", absl::CHexEscape(behavior_name), "'"));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> ttl, OptionalString(object, "TTL", named));
  if (ttl.has_value() && !ttl->empty() && !absl::ParseDuration(*ttl, &info.ttl)) {
    return absl::InvalidArgumentError(
        absl::StrCat(named, ": TTL '", absl::CHexEscape(*ttl), "' is not a duration"));
  }
  ASSIGN_OR_RETURN(std::optional<uint64_t> lock_delay_ns,
                   OptionalUint(object, "LockDelay", named));  // Go time.Duration: nanoseconds
  info.lock_delay = absl::Nanoseconds(lock_delay_ns.value_or(0));
  ASSIGN_OR_RETURN(info.node_checks, CheckIds(object, "NodeChecks", named));
  ASSIGN_OR_RETURN(std::vector<std::string> legacy, CheckIds(object, "Checks", named));
  info.node_checks.insert(info.node_checks.end(), legacy.begin(), legacy.end());
  ASSIGN_OR_RETURN(info.service_checks, CheckIds(object, "ServiceChecks", named));
  ASSIGN_OR_RETURN(std::optional<uint64_t> create_index,
                   OptionalUint(object, "CreateIndex", named));
  info.create_index = create_index.value_or(0);
  ASSIGN_OR_RETURN(std::optional<uint64_t> modify_index,
                   OptionalUint(object, "ModifyIndex", named));
  info.modify_index = modify_index.value_or(0);
  return info;
}

absl::StatusOr<std::vector<SessionInfo>> SessionsFromBody(const HttpRequest& request,
                                                          const HttpResponse& response) {
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  if (!body.is_array()) {
    return MalformedResponse(
        request, absl::StrCat("body is a JSON ", body.type_name(), ", not an array of sessions"));
  }
  std::vector<SessionInfo> sessions;
  for (size_t i = 0; i < body.size(); ++i) {
    absl::StatusOr<SessionInfo> info = SessionFromJson(body[i], absl::StrCat("session ", i));
    if (!info.ok()) return MalformedResponse(request, info.status().message());
    sessions.push_back(*std::move(info));
  }
  return sessions;
}

}  // namespace

const char* SessionBehaviorName(SessionBehavior behavior) {
  return behavior == SessionBehavior::kDelete ? "delete" : "release";
}

absl::StatusOr<HttpRequest> BuildSessionCreateRequest(const SessionCreateOptions& options) {
  if (options.ttl < absl::ZeroDuration() || options.ttl > limits::kMaxSessionTtl) {
    return absl::InvalidArgumentError(
        absl::StrCat("consul session create '", absl::CHexEscape(options.name), "': ttl ",
                     absl::FormatDuration(options.ttl), " is outside [0, 24h]"));
  }
  if (options.lock_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("consul session create '", absl::CHexEscape(options.name), "': lock_delay ",
                     absl::FormatDuration(options.lock_delay), " is negative"));
  }
  nlohmann::json body = {
      {"Name", options.name},
      {"Behavior", SessionBehaviorName(options.behavior)},
      {"LockDelay", FormatSessionDuration(options.lock_delay)},
      // Empty check lists: without them Consul attaches serfHealth.
      {"Checks", nlohmann::json::array()},
      {"NodeChecks", nlohmann::json::array()},
      {"ServiceChecks", nlohmann::json::array()},
  };
  if (options.ttl > absl::ZeroDuration()) body["TTL"] = FormatSessionDuration(options.ttl);
  if (!options.node.empty()) body["Node"] = options.node;
  HttpRequest request;
  request.method = HttpMethod::kPut;
  request.path = "/v1/session/create";
  request.replay_safe = false;  // a second apply creates a second session
  request.headers.emplace_back("Content-Type", "application/json");
  // Replace invalid UTF-8 in names instead of throwing.
  request.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return request;
}

absl::StatusOr<std::string> ParseSessionCreateResponse(const HttpRequest& request,
                                                       const HttpResponse& response) {
  if (response.status != 200) return ErrorFromResponse(request, response);
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  absl::Status object = ExpectObject(body, "body");
  if (!object.ok()) return MalformedResponse(request, object.message());
  absl::StatusOr<std::string> id = RequiredString(body, "ID", "body");
  if (!id.ok()) return MalformedResponse(request, id.status().message());
  if (id->empty()) return MalformedResponse(request, "empty session ID");
  return id;
}

absl::StatusOr<HttpRequest> BuildSessionRenewRequest(absl::string_view id) {
  return SessionIdRequest(HttpMethod::kPut, "renew", id);
}

absl::StatusOr<std::optional<SessionInfo>> ParseSessionRenewResponse(const HttpRequest& request,
                                                                     const HttpResponse& response) {
  if (response.status == 404) return std::optional<SessionInfo>();
  if (response.status != 200) return ErrorFromResponse(request, response);
  ASSIGN_OR_RETURN(std::vector<SessionInfo> sessions, SessionsFromBody(request, response));
  if (sessions.empty()) return std::optional<SessionInfo>();
  return std::optional<SessionInfo>(std::move(sessions.front()));
}

absl::StatusOr<HttpRequest> BuildSessionDestroyRequest(absl::string_view id) {
  return SessionIdRequest(HttpMethod::kPut, "destroy", id);
}

absl::Status ParseSessionDestroyResponse(const HttpRequest& request, const HttpResponse& response) {
  if (response.status != 200) return ErrorFromResponse(request, response);
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  if (!body.is_boolean()) {
    return MalformedResponse(request,
                             absl::StrCat("body is a JSON ", body.type_name(), ", not true/false"));
  }
  if (!body.get<bool>()) {
    return absl::InternalError(absl::StrCat(RequestLabel(request), ": server answered false"));
  }
  return absl::OkStatus();
}

absl::StatusOr<HttpRequest> BuildSessionInfoRequest(absl::string_view id,
                                                    const QueryOptions& query) {
  ASSIGN_OR_RETURN(HttpRequest request, SessionIdRequest(HttpMethod::kGet, "info", id));
  RETURN_IF_ERROR(ApplyQueryOptions(query, &request));
  return request;
}

absl::StatusOr<SessionInfoResult> ParseSessionInfoResponse(const HttpRequest& request,
                                                           const HttpResponse& response) {
  if (response.status != 200) return ErrorFromResponse(request, response);
  SessionInfoResult result;
  ASSIGN_OR_RETURN(result.meta, ParseQueryMeta(request, response));
  ASSIGN_OR_RETURN(std::vector<SessionInfo> sessions, SessionsFromBody(request, response));
  if (sessions.size() > 1) {
    return MalformedResponse(request, absl::StrCat(sessions.size(), " sessions for one id"));
  }
  if (!sessions.empty()) result.session = std::move(sessions.front());
  return result;
}

absl::StatusOr<HttpRequest> BuildSessionListRequest(const QueryOptions& query) {
  HttpRequest request;
  request.method = HttpMethod::kGet;
  request.path = "/v1/session/list";
  RETURN_IF_ERROR(ApplyQueryOptions(query, &request));
  return request;
}

absl::StatusOr<SessionListResult> ParseSessionListResponse(const HttpRequest& request,
                                                           const HttpResponse& response) {
  if (response.status != 200) return ErrorFromResponse(request, response);
  SessionListResult result;
  ASSIGN_OR_RETURN(result.meta, ParseQueryMeta(request, response));
  ASSIGN_OR_RETURN(result.sessions, SessionsFromBody(request, response));
  return result;
}

}  // namespace registry::consul
