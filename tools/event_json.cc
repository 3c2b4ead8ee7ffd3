// tools/event_json.cc
#include "tools/event_json.h"

#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"

namespace registry::tools {
namespace {

// Length of the valid UTF-8 sequence starting at bytes[i], or 0 if none starts there
// (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(absl::string_view bytes, size_t i) {
  const auto at = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
  const uint8_t b0 = at(i);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;
    if (b0 == 0xED) high = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;
    if (b0 == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > bytes.size()) return 0;
  if (at(i + 1) < low || at(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

bool AppendJsonString(absl::string_view bytes, std::string* out) {
  bool valid = true;
  out->push_back('"');
  for (size_t i = 0; i < bytes.size();) {
    const uint8_t c = static_cast<uint8_t>(bytes[i]);
    switch (c) {
      case '"':
        out->append("\\\"");
        ++i;
        continue;
      case '\\':
        out->append("\\\\");
        ++i;
        continue;
      case '\b':
        out->append("\\b");
        ++i;
        continue;
      case '\f':
        out->append("\\f");
        ++i;
        continue;
      case '\n':
        out->append("\\n");
        ++i;
        continue;
      case '\r':
        out->append("\\r");
        ++i;
        continue;
      case '\t':
        out->append("\\t");
        ++i;
        continue;
      default:
        break;
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
