// SPDX-License-Identifier: Apache-2.0
// repository/call_checks.cc
#include "repository/call_checks.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/kv.h"

namespace registry {

absl::Status CallChecks::Check(absl::string_view operation, absl::string_view key,
                               RootKey root) const {
  if (absl::Status status = ValidateRepositoryKey(key, root); !status.ok()) {
    return Prefixed(operation, status);
  }
  if (keeper_.stopped()) {
    return absl::FailedPreconditionError(
        absl::StrCat(operation, " '", Abbreviated(key), "': the repository is closed"));
  }
  return absl::OkStatus();
}

absl::Status CallChecks::CheckEntry(absl::string_view operation, absl::string_view key,
                                    absl::string_view value) const {
  RETURN_IF_ERROR(Check(operation, key, RootKey::kRejected));
  if (value.size() > consul::kMaxValueBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(operation, " '", Abbreviated(key), "': a value of ", value.size(),
                     " bytes exceeds the limit of ", consul::kMaxValueBytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CallChecks::Failed(absl::string_view operation, absl::string_view key,
                                absl::Status status) const {
  // Also a watch the closed engine refused between Check() and the engine's own check.
  if ((status.code() == absl::StatusCode::kCancelled ||
       status.code() == absl::StatusCode::kFailedPrecondition) &&
      keeper_.stopped()) {
    status = absl::FailedPreconditionError("the repository is closed");
  }
  return Prefixed(absl::StrCat(operation, " '", Abbreviated(key), "'"), status);
}

}  // namespace registry
