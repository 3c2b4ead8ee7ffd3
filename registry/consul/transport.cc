#include "registry/consul/transport.h"

#include "absl/strings/cord.h"

namespace registry::consul {
namespace {

constexpr absl::string_view kNotSentPayload = "type.registry/consul.ConnectionError";

}  // namespace

absl::Status ConnectionError(absl::string_view message) {
  absl::Status status = absl::UnavailableError(message);
  status.SetPayload(kNotSentPayload, absl::Cord("not sent"));
  return status;
}

bool IsConnectionError(const absl::Status& status) {
  return absl::IsUnavailable(status) && status.GetPayload(kNotSentPayload).has_value();
}

bool IsUnknownOutcome(const absl::Status& status) {
  return absl::IsUnavailable(status) && !IsConnectionError(status);
}

}  // namespace registry::consul
