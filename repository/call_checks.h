// SPDX-License-Identifier: Apache-2.0
// repository/call_checks.h
//
// How a repository call reports what went wrong, written once for every call: its key checked
// (key_space.h's rules), a closed repository refused, and a failure prefixed with the operation
// and the key, a request cut by Close() reported as FailedPrecondition like every call after it.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REPOSITORY_CALL_CHECKS_H_
#define REPOSITORY_CALL_CHECKS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "repository/key_space.h"
#include "repository/session_keeper.h"

namespace registry {

class CallChecks {
 public:
  // The repository is closed once `keeper` is stopped; `keeper` must outlive this object.
  explicit CallChecks(SessionKeeper& keeper) : keeper_(keeper) {}

  // InvalidArgument for a bad `key`, FailedPrecondition once closed; both name `operation` and
  // `key`.
  absl::Status Check(absl::string_view operation, absl::string_view key, RootKey root) const;
  // Check, then InvalidArgument if `value` is longer than a Consul value may be.
  absl::Status CheckEntry(absl::string_view operation, absl::string_view key,
                          absl::string_view value) const;
  // `status` of a failed call, prefixed with `operation` and `key`.
  absl::Status Failed(absl::string_view operation, absl::string_view key,
                      absl::Status status) const;

 private:
  SessionKeeper& keeper_;
};

}  // namespace registry

#endif  // REPOSITORY_CALL_CHECKS_H_
