// SPDX-License-Identifier: Apache-2.0
// consul/session.h
//
// The session endpoint (/v1/session/) as request builders and response parsers (see kv.h for
// why building and parsing are separate from execution).
//
// Sessions are created with "Checks": [] and empty NodeChecks/ServiceChecks, so Consul attaches
// no serfHealth check: a session lives exactly as long as its TTL is renewed (TTL x 2 on the
// server) or until it is destroyed. Session ids are escaped into the path; an empty id or one
// with control characters is InvalidArgument.
//
// Thread safety: pure functions.
#ifndef CONSUL_SESSION_H_
#define CONSUL_SESSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "consul/http_types.h"
#include "consul/query.h"

namespace registry::consul {

// What happens to the keys a session holds when it is invalidated.
enum class SessionBehavior {
  kRelease,  // the keys stay, unlocked
  kDelete,   // the keys are deleted (ephemeral keys)
};

// "release" or "delete".
const char* SessionBehaviorName(SessionBehavior behavior);

struct SessionCreateOptions {
  std::string name{};
  SessionBehavior behavior = SessionBehavior::kRelease;
  // Zero: no TTL. Otherwise at most 24h (the server also enforces its own minimum, 10 s on a
  // default Consul). Sent as "15s" when whole seconds, else as milliseconds ("1500ms").
  absl::Duration ttl = absl::ZeroDuration();
  // How long a key released by invalidation cannot be re-acquired; zero disables it.
  absl::Duration lock_delay = absl::Seconds(15);
  // Node the session belongs to; empty = the agent's node.
  std::string node{};
};

struct SessionInfo {
  std::string id;
  std::string name;
  std::string node;
  SessionBehavior behavior = SessionBehavior::kRelease;
  absl::Duration ttl = absl::ZeroDuration();  // zero when the session has no TTL
  absl::Duration lock_delay = absl::ZeroDuration();
  std::vector<std::string> node_checks;     // check ids ("Checks" on old servers)
  std::vector<std::string> service_checks;  // service check ids
  uint64_t create_index = 0;
  uint64_t modify_index = 0;
};

struct SessionInfoResult {
  QueryMeta meta;
  std::optional<SessionInfo> session;  // nullopt: no such session
};

struct SessionListResult {
  QueryMeta meta;
  std::vector<SessionInfo> sessions;
};

// PUT /v1/session/create with a JSON body; parses {"ID": "..."} into the new session id.
// Errors: InvalidArgument for a negative or over-24h TTL or a negative lock delay.
absl::StatusOr<HttpRequest> BuildSessionCreateRequest(const SessionCreateOptions& options);
absl::StatusOr<std::string> ParseSessionCreateResponse(const HttpRequest& request,
                                                       const HttpResponse& response);

// PUT /v1/session/renew/<id>. Parses the renewed session, or nullopt when the server no longer
// knows it (HTTP 404: expired or destroyed; the caller must create a new one).
absl::StatusOr<HttpRequest> BuildSessionRenewRequest(absl::string_view id);
absl::StatusOr<std::optional<SessionInfo>> ParseSessionRenewResponse(const HttpRequest& request,
                                                                     const HttpResponse& response);

// PUT /v1/session/destroy/<id>. Succeeds also for an unknown id (Consul answers true).
absl::StatusOr<HttpRequest> BuildSessionDestroyRequest(absl::string_view id);
absl::Status ParseSessionDestroyResponse(const HttpRequest& request, const HttpResponse& response);

// GET /v1/session/info/<id>: the session, or nullopt when it does not exist (Consul's []).
absl::StatusOr<HttpRequest> BuildSessionInfoRequest(absl::string_view id,
                                                    const QueryOptions& query);
absl::StatusOr<SessionInfoResult> ParseSessionInfoResponse(const HttpRequest& request,
                                                           const HttpResponse& response);

// GET /v1/session/list: every session in the datacenter.
absl::StatusOr<HttpRequest> BuildSessionListRequest(const QueryOptions& query);
absl::StatusOr<SessionListResult> ParseSessionListResponse(const HttpRequest& request,
                                                           const HttpResponse& response);

}  // namespace registry::consul

#endif  // CONSUL_SESSION_H_
