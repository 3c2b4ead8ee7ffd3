// SPDX-License-Identifier: Apache-2.0
// consul/errors.h
//
// One mapping from Consul HTTP answers to absl::Status, used by every response parser.
// Messages look like "consul PUT /v1/kv/a: HTTP 403: Permission denied" and the HTTP status is
// also attached as a payload (HttpStatusOf). Codes:
//   400, 413                         -> InvalidArgument
//   403                              -> PermissionDenied
//   404 (where absence is an error)  -> NotFound
//   429, 502, 503, 504               -> Unavailable (retry later / elsewhere)
//   5xx of a leader failure (below)  -> Unavailable (the client fails over and retries on it);
//                                       marked NotSent when nothing was applied
//   500 'Invalid session "<id>"'     -> FailedPrecondition (the session is gone)
//   409 from /v1/txn saying "Permission denied" (a rollback for lack of an ACL right)
//                                    -> PermissionDenied
//   any other 4xx                    -> FailedPrecondition
//   any other 5xx or unexpected code -> Internal
//   malformed response               -> DataLoss
//
// Thread safety: pure functions.
#ifndef CONSUL_ERRORS_H_
#define CONSUL_ERRORS_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "consul/http_types.h"

namespace registry::consul {

// Maps a non-success `response` to a status as in the table above. Consul's message (the body,
// trimmed and cut to a few hundred bytes) is quoted.
absl::Status ErrorFromResponse(const HttpRequest& request, const HttpResponse& response);

// What a 5xx answer says about the cluster's leader. Consul answers 500 while its servers elect a
// leader or cannot reach the one they know (a leader killed, restarted, partitioned away):
enum class LeaderFailure {
  kNone,  // not a leader failure
  // Nothing was applied: "No cluster leader", "rpc error getting client: ..." (the server could not
  // even connect to the leader to forward the request), "node is not the leader", "timed out
  // enqueuing operation", "leadership transfer in progress", "No known Consul servers".
  kNotApplied,
  // Forwarded, then the answer was lost: "rpc error making call: ..." (EOF, stream closed),
  // "leadership lost while committing log", "raft is already shutdown". A write may have been
  // applied.
  kOutcomeUnknown,
};
LeaderFailure LeaderFailureOf(const HttpResponse& response);

// DataLoss "consul GET /v1/kv/a: malformed response: <detail>".
absl::Status MalformedResponse(const HttpRequest& request, absl::string_view detail);

// The HTTP status carried by a status made by ErrorFromResponse(), if any.
std::optional<int> HttpStatusOf(const absl::Status& status);

// Failures that another attempt may cure, on this server or another: no server answered or none
// had a leader (Unavailable), a server error (Internal), a request cut by its timeout
// (DeadlineExceeded), a malformed answer (DataLoss). Not a refusal (4xx), an invalid session or
// a cancellation.
bool IsTransient(const absl::Status& status);

// Consul's 500 'Invalid session "<id>"' to a KV write or acquire (FailedPrecondition above): the
// session expired or was destroyed. (In a transaction the same reason comes as a rolled-back
// operation: consul/txn.h.)
bool IsInvalidSession(const absl::Status& status);

// What a call's outcome says of the store: true when a server with a leader answered (OK, or an
// answer such as 404 or 403), false when no server answered in time or none had a leader
// (Unavailable), nullopt when it says nothing (cancelled, cut by the caller's deadline, a 5xx
// that may be the leader's one-off, a malformed answer).
std::optional<bool> ReachabilityOf(const absl::Status& status);

}  // namespace registry::consul

#endif  // CONSUL_ERRORS_H_
