// SPDX-License-Identifier: Apache-2.0
#include "consul/transport.h"

#include <optional>

#include "absl/strings/cord.h"
#include "consul/errors.h"

namespace registry::consul {
namespace {

constexpr absl::string_view kNotSentPayload = "type.registry/consul.ConnectionError";

}  // namespace

absl::Status NotSent(absl::Status status) {
  status.SetPayload(kNotSentPayload, absl::Cord("not sent"));
  return status;
}

bool IsNotSent(const absl::Status& status) {
  return status.GetPayload(kNotSentPayload).has_value();
}

absl::Status ConnectionError(absl::string_view message) {
  return NotSent(absl::UnavailableError(message));
}

bool IsConnectionError(const absl::Status& status) {
  return absl::IsUnavailable(status) && IsNotSent(status);
}

bool IsUnknownOutcome(const absl::Status& status) {
  if (absl::IsUnavailable(status)) return !IsConnectionError(status);
  // Any other 5xx (errors.h maps it to Internal): Consul answers 500 when a raft apply times out
  // on the leader, and the write may still be committed.
  const std::optional<int> http = HttpStatusOf(status);
  return absl::IsInternal(status) && http.has_value() && *http >= 500;
}

}  // namespace registry::consul
