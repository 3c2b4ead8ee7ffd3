// SPDX-License-Identifier: Apache-2.0
#include "consul/query.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "consul/errors.h"

namespace registry::consul {
namespace {

bool ParseUint64(absl::string_view text, uint64_t* out) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;  // no sign, no space
  }
  return absl::SimpleAtoi(text, out);
}

}  // namespace

std::string FormatWait(absl::Duration wait) {
  if (wait <= absl::ZeroDuration()) return "";
  int64_t ms = absl::ToInt64Milliseconds(wait);  // truncates
  if (ms < 1) ms = 1;
  return absl::StrCat(ms, "ms");
}

absl::Duration BlockingTimeout(absl::Duration wait, absl::Duration margin) {
  return wait + wait / 16 + margin;
}

absl::Status ApplyQueryOptions(const QueryOptions& query, HttpRequest* request) {
  if (query.consistent && query.stale) {
    return absl::InvalidArgumentError(absl::StrCat(
        RequestLabel(*request), ": query options 'consistent' and 'stale' are mutually exclusive"));
  }
  if (query.wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        RequestLabel(*request), ": query wait ", absl::FormatDuration(query.wait), " is negative"));
  }
  request->wait = absl::ZeroDuration();
  if (query.index > 0) {
    request->params.emplace_back("index", absl::StrCat(query.index));
    std::string wait = FormatWait(query.wait);
    if (wait.empty()) {
      request->wait = kConsulDefaultWait;
    } else {
      request->params.emplace_back("wait", wait);
      request->wait = query.wait;
    }
  }
  if (query.consistent) request->params.emplace_back("consistent", "");
  if (query.stale) request->params.emplace_back("stale", "");
  return absl::OkStatus();
}

absl::StatusOr<QueryMeta> ParseQueryMeta(const HttpRequest& request, const HttpResponse& response) {
  QueryMeta meta;
  const std::string* index = response.FindHeader("X-Consul-Index");
  if (index == nullptr) return MalformedResponse(request, "missing X-Consul-Index header");
  if (!ParseUint64(*index, &meta.index)) {
    return MalformedResponse(request, absl::StrCat("X-Consul-Index '", absl::CHexEscape(*index),
                                                   "' is not an unsigned integer"));
  }
  if (meta.index == 0) meta.index = 1;  // Consul never sends 0; 0 would mean "don't block"
  if (const std::string* leader = response.FindHeader("X-Consul-KnownLeader")) {
    meta.known_leader = absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(*leader), "true");
  }
  if (const std::string* contact = response.FindHeader("X-Consul-LastContact")) {
    uint64_t ms = 0;
    // Beyond int64 it would wrap into a negative duration.
    if (!ParseUint64(*contact, &ms) || ms > uint64_t{std::numeric_limits<int64_t>::max()}) {
      return MalformedResponse(request,
                               absl::StrCat("X-Consul-LastContact '", absl::CHexEscape(*contact),
                                            "' is not an unsigned integer of milliseconds"));
    }
    meta.last_contact = absl::Milliseconds(static_cast<int64_t>(ms));
  }
  return meta;
}

IndexTracker::Change IndexTracker::Observe(uint64_t index) {
  if (index == 0) index = 1;
  if (index < index_) {
    index_ = 0;
    return Change::kReset;
  }
  if (index == index_) return Change::kUnchanged;
  index_ = index;
  return Change::kChanged;
}

}  // namespace registry::consul
