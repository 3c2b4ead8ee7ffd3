// SPDX-License-Identifier: Apache-2.0
// tools/event_json.h
//
// The JSON lines `registryctl watch` prints: one object per event, on one line,
//
//   {"type":"ADDED","key":"/a/b","value":"v"}
//   {"type":"DELETED","key":"/a/b","value":null}                      (value unknown)
//   {"type":"UPDATED","key":"/bin","value":"\u0000\ufffd","value_base64":"AP8="}
//
// Strings are valid JSON whatever the bytes: '"', '\' and control characters are escaped, valid
// UTF-8 is copied, and each byte of an invalid UTF-8 sequence becomes U+FFFD. Because that
// replacement loses bytes, a value that is not valid UTF-8 also comes as "value_base64", the
// exact bytes in standard base64.
//
// Thread safety: pure functions.
#ifndef REGISTRY_TOOLS_EVENT_JSON_H_
#define REGISTRY_TOOLS_EVENT_JSON_H_

#include <string>

#include "absl/strings/string_view.h"
#include "registry/events.h"

namespace registry::tools {

// Appends `bytes` to `out` as a quoted JSON string (see above). Returns false iff `bytes` is not
// valid UTF-8 (some bytes were replaced by U+FFFD).
bool AppendJsonString(absl::string_view bytes, std::string* out);

// `event` as one JSON object without a trailing newline (see above).
std::string EventJson(const DataChangedEvent& event);

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_EVENT_JSON_H_
