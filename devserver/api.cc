// SPDX-License-Identifier: Apache-2.0
// Api: routing, query options, ACL/datacenter checks, blocking-query plumbing and the small
// status/agent endpoints. KV is in api_kv.cc, sessions in api_session.cc, txn and the dev
// controls in api_txn.cc and api_dev.cc.
#include "devserver/api.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "devserver/api_util.h"
#include "devserver/go_compat.h"

namespace registry::devserver {
namespace {

std::string BearerToken(absl::string_view authorization) {
  constexpr absl::string_view kBearer = "Bearer ";
  if (authorization.size() > kBearer.size() &&
      absl::EqualsIgnoreCase(authorization.substr(0, kBearer.size()), kBearer)) {
    return std::string(authorization.substr(kBearer.size()));
  }
  return "";
}

// Go's ServeMux sends a path naming a registered subtree without its trailing '/' there.
bool IsSubtreeRoot(absl::string_view path) {
  for (absl::string_view subtree : {"/v1/kv", "/v1/session/destroy", "/v1/session/renew",
                                    "/v1/session/info", "/v1/session/node"}) {
    if (path == subtree) return true;
  }
  return false;
}

// The token of a request: ?token, else X-Consul-Token, else Authorization: Bearer.
std::string PresentedToken(const HttpRequest& request) {
  std::string token = request.Get("token");
  if (token.empty()) token = request.consul_token;
  if (token.empty()) token = BearerToken(request.authorization);
  return token;
}

}  // namespace

// --- BlockingQuery -------------------------------------------------------------------------

BlockingQuery::BlockingQuery(WatchScope scope, uint64_t min_index, absl::Duration timeout,
                             std::function<QueryEvaluation()> evaluate)
    : scope_(std::move(scope)),
      min_index_(min_index),
      timeout_(timeout),
      evaluate_(std::move(evaluate)) {}

std::optional<HttpResponse> BlockingQuery::Step(bool timed_out, uint64_t* watch_version) {
  QueryEvaluation evaluation = evaluate_();
  if (!ran_) start_epoch_ = evaluation.epoch;
  ran_ = true;
  // A reset store is abandoned: Consul returns whatever the query sees now.
  if (timed_out || evaluation.epoch != start_epoch_) return std::move(evaluation.response);
  // Consul's ErrNotFound rule: once a key was found missing, it staying missing is no
  // change, whatever happened to the table index meanwhile.
  if (evaluation.not_found) {
    if (seen_not_found_) min_index_ = evaluation.index;
    seen_not_found_ = true;
  }
  if (evaluation.index > min_index_) return std::move(evaluation.response);
  *watch_version = evaluation.version;
  return std::nullopt;
}

// --- Api -----------------------------------------------------------------------------------

Api::Api(ApiConfig config, Store* store, FaultInjector* faults, RequestStats* stats)
    : config_(std::move(config)),
      http_port_(config_.http_port),
      store_(store),
      faults_(faults),
      stats_(stats) {}

void Api::set_http_port(int port) { http_port_.store(port); }

bool Api::IsFaultablePath(absl::string_view path) { return !absl::StartsWith(path, "/v1/_dev/"); }

ApiOutcome Api::Handle(const HttpRequest& request) {
  const std::string& path = request.path;
  // Consul refuses a path holding a rune Go does not print before routing it, unclean paths
  // included: a bare 400 (go-cleanhttp's PrintablePathCheckHandler wraps the whole mux).
  if (!GoPathIsPrintable(path)) {
    stats_->Count("other");
    HttpResponse refused;
    refused.status = 400;
    refused.outside_handlers = true;
    return refused;
  }
  // Go's ServeMux redirects an unclean path, or a registered subtree named without its '/',
  // before any handler sees it (and writes nothing).
  if (std::string clean = GoCleanPath(path); clean != path || IsSubtreeRoot(path)) {
    stats_->Count("other");
    if (IsSubtreeRoot(path)) clean.push_back('/');
    std::string location = GoEscapePath(clean);
    if (!request.raw_query.empty()) absl::StrAppend(&location, "?", request.raw_query);
    return MovedPermanently(request.method, location);
  }
  if (absl::StartsWith(path, "/v1/_dev/")) return HandleDev(request);
  if (absl::StartsWith(path, "/v1/kv/")) return HandleKv(request);
  if (absl::StartsWith(path, "/v1/session/")) return HandleSession(request);
  if (path == "/v1/txn") return HandleTxn(request);
  if (path == "/v1/catalog/register") return CatalogRegister(request);

  const bool leader = path == "/v1/status/leader";
  if (leader || path == "/v1/status/peers") {
    stats_->Count(leader ? "status.leader" : "status.peers");
    if (request.method == "OPTIONS") return OptionsResponse({"GET"});
    if (request.method != "GET") return MethodNotAllowed(request.method, {"GET"});
    // Consul serves /v1/status without ACL checks.
    if (auto refused = CheckDatacenter(request)) return *refused;
    return leader ? StatusLeader() : StatusPeers();
  }
  if (path == "/v1/agent/self") {
    stats_->Count("agent.self");
    if (request.method == "OPTIONS") return OptionsResponse({"GET"});
    if (request.method != "GET") return MethodNotAllowed(request.method, {"GET"});
    // Agent endpoints are never forwarded, so ?dc does not apply.
    if (auto refused = CheckToken(request)) return *refused;
    return AgentSelf();
  }
  stats_->Count("other");
  HttpResponse not_found;  // from Go's ServeMux: no handler ran
  not_found.status = 404;
  not_found.outside_handlers = true;
  return not_found;
}

std::variant<Api::QueryOptions, HttpResponse> Api::ParseQueryOptions(const HttpRequest& request) {
  QueryOptions options;
  const bool stale = request.Has("stale");
  const bool consistent = request.Has("consistent");
  if (stale && consistent) {
    return TextResponse(400, "Cannot specify ?stale with ?consistent, conflicting semantics.");
  }
  if (std::string wait = request.Get("wait"); !wait.empty()) {
    absl::StatusOr<absl::Duration> parsed = ParseGoDuration(wait);
    if (!parsed.ok()) return TextResponse(400, "Invalid wait time");
    options.wait = *parsed;
  }
  if (std::string index = request.Get("index"); !index.empty()) {
    absl::StatusOr<uint64_t> parsed = ParseGoUint(index);
    if (!parsed.ok()) return TextResponse(400, "Invalid index");
    options.min_index = *parsed;
  }
  return options;
}

std::optional<HttpResponse> Api::CheckDatacenter(const HttpRequest& request) const {
  if (std::string dc = request.Get("dc"); !dc.empty() && dc != config_.datacenter) {
    return TextResponse(500, "No path to datacenter");
  }
  return std::nullopt;
}

std::optional<HttpResponse> Api::CheckToken(const HttpRequest& request) const {
  if (config_.acl_master_token.empty()) return std::nullopt;
  const std::string token = PresentedToken(request);
  if (!token.empty() && token == config_.acl_master_token) return std::nullopt;
  stats_->Count("acl.denied");  // lets tests see a request that lost its token
  return TextResponse(403, token.empty() ? "Permission denied" : "ACL not found");
}

std::optional<HttpResponse> Api::BeforeStoreCall(const HttpRequest& request, bool* filtered) const {
  const bool anonymous = !config_.acl_master_token.empty() && PresentedToken(request).empty();
  if (filtered != nullptr) *filtered = anonymous;
  if (auto refused = CheckDatacenter(request)) return refused;
  if (filtered != nullptr && anonymous) {
    stats_->Count("acl.denied");
  } else if (auto refused = CheckToken(request)) {
    return refused;
  }
  if (faults_->ConsumeFailure()) return TextResponse(500, "No cluster leader");
  return std::nullopt;
}

absl::Duration Api::QueryTimeout(absl::Duration wait) {
  absl::Duration timeout = wait;
  if (timeout > config_.max_query_time) {
    timeout = config_.max_query_time;
  } else if (timeout <= absl::ZeroDuration()) {
    timeout = config_.default_query_time;
  }
  // Consul's RandomStagger(timeout / JitterFraction): spreads simultaneous timeouts.
  const int64_t jitter_ns = absl::ToInt64Nanoseconds(timeout / 16);
  if (jitter_ns > 0) {
    absl::MutexLock lock(&mu_);
    timeout += absl::Nanoseconds(absl::Uniform<int64_t>(rng_, 0, jitter_ns));
  }
  return timeout;
}

ApiOutcome Api::Read(const QueryOptions& options, WatchScope scope,
                     std::function<QueryEvaluation()> evaluate) {
  if (options.min_index == 0) return std::move(evaluate().response);
  return std::make_unique<BlockingQuery>(std::move(scope), options.min_index,
                                         QueryTimeout(options.wait), std::move(evaluate));
}

// --- /v1/status and /v1/agent/self ---------------------------------------------------------

HttpResponse Api::StatusLeader() const {
  return JsonResponse(200, Json(absl::StrCat(config_.advertise_host, ":8300")));
}

HttpResponse Api::StatusPeers() const {
  return JsonResponse(200, Json::array({absl::StrCat(config_.advertise_host, ":8300")}));
}

HttpResponse Api::AgentSelf() const {
  const std::string index = absl::StrCat(store_->last_index());
  Json self;
  self["Config"] = Json{{"Datacenter", config_.datacenter},
                        {"PrimaryDatacenter", config_.datacenter},
                        {"NodeName", config_.node_name},
                        {"NodeID", "00000000-0000-4000-8000-000000000001"},
                        {"Revision", "devserver"},
                        {"Server", true},
                        {"Version", "1.20.0"},
                        {"BuildDate", "2024-01-01T00:00:00Z"}};
  self["DebugConfig"] = Json{{"Datacenter", config_.datacenter},
                             {"NodeName", config_.node_name},
                             {"DevMode", true},
                             {"HTTPPort", http_port_.load()},
                             {"ServerPort", 8300},
                             {"ACLsEnabled", !config_.acl_master_token.empty()}};
  self["Coord"] = nullptr;
  self["Member"] = Json{{"Name", config_.node_name},
                        {"Addr", config_.advertise_host},
                        {"Port", 8301},
                        {"Tags", Json{{"role", "consul"},
                                      {"dc", config_.datacenter},
                                      {"port", "8300"},
                                      {"bootstrap", "1"},
                                      {"build", "1.20.0:devserver"},
                                      {"vsn", "2"}}},
                        {"Status", 1},
                        {"ProtocolMin", 1},
                        {"ProtocolMax", 5},
                        {"ProtocolCur", 2},
                        {"DelegateMin", 2},
                        {"DelegateMax", 5},
                        {"DelegateCur", 4}};
  self["Stats"] =
      Json{{"agent", Json{{"check_monitors", "0"}, {"checks", "1"}, {"services", "0"}}},
           {"consul", Json{{"bootstrap", "true"},
                           {"known_datacenters", "1"},
                           {"leader", "true"},
                           {"leader_addr", absl::StrCat(config_.advertise_host, ":8300")},
                           {"server", "true"}}},
           {"raft", Json{{"state", "Leader"},
                         {"num_peers", "0"},
                         {"applied_index", index},
                         {"commit_index", index},
                         {"last_log_index", index}}}};
  self["Meta"] = Json{{"consul-network-segment", ""}};
  self["xDS"] = nullptr;
  return JsonResponse(200, self);
}

}  // namespace registry::devserver
