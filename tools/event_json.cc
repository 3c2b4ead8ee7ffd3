// SPDX-License-Identifier: Apache-2.0
// tools/event_json.cc
#include "tools/event_json.h"

#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "base/utf8.h"

namespace registry::tools {

namespace {

// JSON's two-character escape of `c`, or nullptr when it has none.
const char* ShortEscape(uint8_t c) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      return nullptr;
  }
}

}  // namespace

bool AppendJsonString(absl::string_view bytes, std::string* out) {
  bool valid = true;
  out->push_back('"');
  for (size_t i = 0; i < bytes.size();) {
    const uint8_t c = static_cast<uint8_t>(bytes[i]);
    if (const char* escape = ShortEscape(c); escape != nullptr) {
      out->append(escape);
      ++i;
      continue;
    }
    if (c < 0x20) {
      absl::StrAppendFormat(out, "\\u%04x", c);
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(bytes, i);
    if (length == 0) {
      out->append("\\ufffd");
      valid = false;
      ++i;
      continue;
    }
    out->append(bytes.data() + i, length);
    i += length;
  }
  out->push_back('"');
  return valid;
}

std::string EventJson(const DataChangedEvent& event) {
  std::string json = "{\"type\":\"";
  json.append(DataChangedEventTypeName(event.type));
  json.append("\",\"key\":");
  AppendJsonString(event.key, &json);
  json.append(",\"value\":");
  if (!event.value.has_value()) {
    json.append("null");
  } else if (!AppendJsonString(*event.value, &json)) {
    json.append(",\"value_base64\":\"");
    json.append(absl::Base64Escape(*event.value));
    json.push_back('"');
  }
  json.push_back('}');
  return json;
}

}  // namespace registry::tools
