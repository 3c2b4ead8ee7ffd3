// SPDX-License-Identifier: Apache-2.0
// base/status_text.h
//
// Rewording a status on its way up: each layer puts what it knows (the operation, the key, the
// lock) in front of the message of what failed below it. Both helpers keep the code and every
// payload (e.g. consul/'s mark of a request that was never sent), which building a new
// absl::Status from code and text would drop. Abbreviated() keeps what a message quotes of the
// caller's input (a key, a path) small however large that input is.
//
// Thread safety: pure functions.
#ifndef BASE_STATUS_TEXT_H_
#define BASE_STATUS_TEXT_H_

#include <cstddef>
#include <string>

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

// The most bytes of a caller's text that a message quotes (Abbreviated).
inline constexpr size_t kShownInMessage = 200;

// `text` as a message may quote it: whole up to kShownInMessage bytes; else its first bytes,
// cut at a UTF-8 character boundary, then "... (N bytes)". Each layer that names a key in a
// message quotes it so: a 100 KB key would otherwise make a message of 300 KB.
inline std::string Abbreviated(absl::string_view text) {
  if (text.size() <= kShownInMessage) return std::string(text);
  size_t cut = kShownInMessage;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(text.substr(0, cut), "... (", text.size(), " bytes)");
}

}  // namespace registry

#endif  // BASE_STATUS_TEXT_H_
