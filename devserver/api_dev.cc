// SPDX-License-Identifier: Apache-2.0
// Api: /v1/_dev/ controls. Request counters are always on; fault injection only when the
// server was started with it (otherwise those paths are 404, like any unknown path).
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "devserver/api.h"
#include "devserver/api_util.h"
#include "devserver/go_compat.h"

namespace registry::devserver {
namespace {

constexpr absl::string_view kDevPrefix = "/v1/_dev/";

HttpResponse NotFound() {
  HttpResponse response;
  response.status = 404;
  return response;
}

// Reads the required non-negative integer parameter `name`; 400 naming it otherwise.
std::variant<uint64_t, HttpResponse> RequiredCount(const HttpRequest& request,
                                                   absl::string_view name) {
  if (!request.Has(name)) {
    return TextResponse(400, absl::StrCat("missing query parameter '", name, "'"));
  }
  absl::StatusOr<uint64_t> value = ParseGoUint(request.Get(name));
  if (!value.ok() || *value > 1000000000) {
    return TextResponse(400, absl::StrCat("query parameter '", name, "': '", request.Get(name),
                                          "' is not a count between 0 and 1000000000"));
  }
  return *value;
}

}  // namespace

HttpResponse Api::HandleDev(const HttpRequest& request) {
  const std::string control = request.path.substr(kDevPrefix.size());
  const bool is_stats = control == "stats" || control == "stats/reset";
  if (!is_stats && !config_.enable_fault_injection) return NotFound();
  const bool known = is_stats || control == "fault/latency" || control == "fault/fail" ||
                     control == "fault/drop" || control == "fault/drop-reply" ||
                     control == "fault/drop-all" || control == "fault/clear" ||
                     control == "fault/index-reset" || absl::StartsWith(control, "session/expire/");
  if (!known) return NotFound();
  const absl::string_view method = control == "stats" ? "GET" : "PUT";
  if (request.method != method) return MethodNotAllowed(request.method, {method});
  if (auto refused = CheckToken(request)) return *refused;

  if (control == "stats") {
    Json counts = Json::object();
    for (const auto& [endpoint, count] : stats_->Snapshot()) counts[endpoint] = count;
    counts["watches.woken"] = store_->woken_watch_count();
    return JsonResponse(200, counts);
  }
  if (control == "stats/reset") {
    stats_->Reset();
    store_->ResetWokenWatchCount();
    return JsonResponse(200, Json(true));
  }
  if (control == "fault/clear") {
    faults_->Clear();
    return JsonResponse(200, Json(true));
  }
  if (control == "fault/drop-all") {
    HttpResponse response = JsonResponse(200, Json(true));
    response.drop_other_connections = true;
    return response;
  }
  if (control == "fault/index-reset") {
    uint64_t base = 1;
    if (request.Has("index")) {
      auto parsed = RequiredCount(request, "index");
      if (auto* error = std::get_if<HttpResponse>(&parsed)) return std::move(*error);
      base = std::max<uint64_t>(std::get<uint64_t>(parsed), 1);
    }
    store_->ResetIndex(base);
    return JsonResponse(200, Json{{"Index", base}});
  }
  if (absl::StartsWith(control, "session/expire/")) {
    const std::string id = control.substr(std::string("session/expire/").size());
    if (!store_->ExpireSession(id)) {
      return TextResponse(404, absl::StrCat("Session id '", id, "' not found"));
    }
    return JsonResponse(200, Json(true));
  }
  const absl::string_view parameter = control == "fault/latency" ? "ms" : "count";
  auto parsed = RequiredCount(request, parameter);
  if (auto* error = std::get_if<HttpResponse>(&parsed)) return std::move(*error);
  const uint64_t value = std::get<uint64_t>(parsed);
  if (control == "fault/latency") {
    faults_->SetLatency(absl::Milliseconds(value));
  } else if (control == "fault/fail") {
    faults_->FailNextRequests(static_cast<int>(value));
  } else if (control == "fault/drop-reply") {
    // Optional filters: only requests with this `method` whose path starts with `path` (e.g.
    // method=PUT&path=/v1/kv/) lose their reply.
    faults_->DropNextReplies(static_cast<int>(value), request.Get("path"), request.Get("method"));
  } else {
    faults_->DropNextConnections(static_cast<int>(value));
  }
  return JsonResponse(200, Json(true));
}

}  // namespace registry::devserver
