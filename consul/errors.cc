// SPDX-License-Identifier: Apache-2.0
#include "consul/errors.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "consul/transport.h"

namespace registry::consul {
namespace {

constexpr absl::string_view kHttpStatusPayload = "type.registry/consul.HttpStatus";
constexpr size_t kMaxQuotedBody = 300;

bool ContainsIgnoreCase(absl::string_view haystack, absl::string_view needle) {
  return absl::StrContains(absl::AsciiStrToLower(haystack), absl::AsciiStrToLower(needle));
}

std::string QuotedBody(absl::string_view body) {
  body = absl::StripAsciiWhitespace(body);
  std::string text(body.substr(0, kMaxQuotedBody));
  // Keep messages printable whatever the server sent.
  text = absl::CHexEscape(text);
  if (body.size() > kMaxQuotedBody) text += "...";
  return text.empty() ? "(empty body)" : text;
}

// Consul's and its raft library's messages, lower case. "no cluster leader" comes first: a
// follower that forwarded to a leader which has just stepped down answers "rpc error making
// call: No cluster leader", and nothing was applied then.
constexpr absl::string_view kNotAppliedMessages[] = {
    "no cluster leader",   "rpc error getting client",        "node is not the leader",
    "timed out enqueuing", "leadership transfer in progress", "no known consul servers"};
constexpr absl::string_view kOutcomeUnknownMessages[] = {
    "rpc error making call", "leadership lost while committing log", "raft is already shutdown"};

LeaderFailure LeaderFailureOfBody(int status, absl::string_view body) {
  if (status < 500 || status >= 600) return LeaderFailure::kNone;
  const std::string lower = absl::AsciiStrToLower(body);
  for (absl::string_view message : kNotAppliedMessages) {
    if (absl::StrContains(lower, message)) return LeaderFailure::kNotApplied;
  }
  for (absl::string_view message : kOutcomeUnknownMessages) {
    if (absl::StrContains(lower, message)) return LeaderFailure::kOutcomeUnknown;
  }
  return LeaderFailure::kNone;
}

absl::StatusCode CodeFor(int status, absl::string_view body) {
  switch (status) {
    case 400:
    case 413:
      return absl::StatusCode::kInvalidArgument;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 429:
    case 502:
    case 503:
    case 504:
      return absl::StatusCode::kUnavailable;
    default:
      break;
  }
  if (status >= 500 && status < 600) {
    if (LeaderFailureOfBody(status, body) != LeaderFailure::kNone) {
      return absl::StatusCode::kUnavailable;
    }
    // Consul's KV apply error for an unknown session: Invalid session "<id>". (Not to be
    // confused with "Invalid Session TTL", a plain bad request answered with 500.)
    if (ContainsIgnoreCase(body, "invalid session \"")) {
      return absl::StatusCode::kFailedPrecondition;
    }
    return absl::StatusCode::kInternal;
  }
  if (status >= 400 && status < 500) {
    // A txn whose token lacks a right is rolled back (409) with this reason on the op.
    if (ContainsIgnoreCase(body, "permission denied")) return absl::StatusCode::kPermissionDenied;
    return absl::StatusCode::kFailedPrecondition;
  }
  return absl::StatusCode::kInternal;
}

}  // namespace

absl::Status ErrorFromResponse(const HttpRequest& request, const HttpResponse& response) {
  absl::Status status(CodeFor(response.status, response.body),
                      absl::StrCat(RequestLabel(request), ": HTTP ", response.status, ": ",
                                   QuotedBody(response.body)));
  status.SetPayload(kHttpStatusPayload, absl::Cord(absl::StrCat(response.status)));
  if (LeaderFailureOf(response) == LeaderFailure::kNotApplied) return NotSent(std::move(status));
  return status;
}

LeaderFailure LeaderFailureOf(const HttpResponse& response) {
  return LeaderFailureOfBody(response.status, response.body);
}

std::optional<bool> ReachabilityOf(const absl::Status& status) {
  if (status.ok()) return true;
  if (absl::IsUnavailable(status)) return false;
  const std::optional<int> http = HttpStatusOf(status);
  if (http.has_value() && *http < 500) return true;
  return std::nullopt;
}

bool IsTransient(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsInternal(status) ||
         absl::IsDeadlineExceeded(status) || absl::IsDataLoss(status);
}

bool IsInvalidSession(const absl::Status& status) {
  // Only that answer is a FailedPrecondition with a 5xx (CodeFor).
  return absl::IsFailedPrecondition(status) && HttpStatusOf(status) == 500;
}

absl::Status MalformedResponse(const HttpRequest& request, absl::string_view detail) {
  return absl::DataLossError(absl::StrCat(RequestLabel(request), ": malformed response: ", detail));
}

std::optional<int> HttpStatusOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kHttpStatusPayload);
  int code = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &code)) return std::nullopt;
  return code;
}

}  // namespace registry::consul
