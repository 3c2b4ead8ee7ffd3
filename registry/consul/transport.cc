#include "registry/consul/transport.h"

#include "absl/strings/cord.h"

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
  return absl::IsUnavailable(status) && !IsConnectionError(status);
}

}  // namespace registry::consul
