// SPDX-License-Identifier: Apache-2.0
// base/status_text.h
//
// Rewording a status on its way up: each layer puts what it knows (the operation, the key, the
// lock) in front of the message of what failed below it. Both helpers keep the code and every
// payload (e.g. consul/'s mark of a request that was never sent), which building a new
// absl::Status from code and text would drop.
//
// Thread safety: pure functions.
#ifndef BASE_STATUS_TEXT_H_
#define BASE_STATUS_TEXT_H_

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace registry {

// `status` with its message replaced by `message`. OK stays OK.
inline absl::Status WithMessage(const absl::Status& status, absl::string_view message) {
  if (status.ok()) return status;
  absl::Status copy(status.code(), message);
  status.ForEachPayload(
      [&copy](absl::string_view url, const absl::Cord& payload) { copy.SetPayload(url, payload); });
  return copy;
}

// `status` with "<prefix>: " before its message. OK stays OK.
inline absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return WithMessage(status, absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace registry

#endif  // BASE_STATUS_TEXT_H_
