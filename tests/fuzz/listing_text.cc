// SPDX-License-Identifier: Apache-2.0
#include "tests/fuzz/listing_text.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace registry::fuzz {
namespace {

// Prefixes around the scopes the fuzzer watches ("", "ns/", "ns/a", "ns/a/"), inside and out.
constexpr const char* kPrefixes[] = {"ns/a", "ns/a/", "ns/ab", "ns/", "other/", "", "ns/a/b/"};
constexpr const char* kSuffixes[] = {
    "", "1", "2", "x", "\xC3\xA9", "q\"", "\\", "\n", "/", "\xE2\x80\xA8", "z", "%20"};

// `text` as a JSON string: plain escapes, or (when `all`) \u escapes for every non-alphanumeric
// byte below 0x80. Bytes from 0x80 up are copied as they are.
std::string JsonString(const std::string& text, bool all) {
  std::string out = "\"";
  for (unsigned char c : text) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c >= 0x80 || alnum || (!all && c >= 0x20 && c != '"' && c != '\\')) {
      out.push_back(static_cast<char>(c));
    } else if (!all && (c == '"' || c == '\\')) {
      out += {'\\', static_cast<char>(c)};
    } else {
      out += absl::StrFormat("\\u%04x", c);
    }
  }
  return out + "\"";
}

std::string Key(FuzzedDataProvider& input) {
  std::string key = input.PickValueInArray(kPrefixes);
  if (input.ConsumeIntegral<uint8_t>() < 16) return key + input.ConsumeRandomLengthString(6);
  return key + input.PickValueInArray(kSuffixes);
}

std::string Value(FuzzedDataProvider& input) {
  const std::string bytes = input.ConsumeRandomLengthString(12);
  switch (input.ConsumeIntegralInRange(0, 15)) {
    case 0:
      return "null";
    case 1:
      return "\"\"";
    case 2:
      return "\"!!\"";  // not base64
    case 3: {
      std::string unpadded = absl::Base64Escape(bytes);
      unpadded.erase(unpadded.find_last_not_of('=') + 1);
      return JsonString(unpadded, false);
    }
    case 4:
      return JsonString(absl::Base64Escape(bytes), true);
    default:
      return JsonString(absl::Base64Escape(bytes), false);
  }
}

std::string Index(FuzzedDataProvider& input) {
  const uint8_t pick = input.ConsumeIntegral<uint8_t>();
  if (pick < 200) return absl::StrCat(1 + pick % 6);  // small: listings share indexes
  if (pick < 250) return absl::StrCat(input.ConsumeIntegral<uint64_t>());
  return "18446744073709551616";  // one past uint64
}

// One DirEntry object, its fields in an order chosen by `input`.
std::string Entry(FuzzedDataProvider& input, const std::string& key) {
  const uint16_t bits = input.ConsumeIntegral<uint16_t>();
  std::vector<std::string> fields;
  fields.push_back("\"Key\":" + JsonString(key, bits & 1));
  if (!(bits & 2)) fields.push_back("\"Value\":" + Value(input));
  if (!(bits & 4)) fields.push_back("\"Flags\":" + Index(input));
  if (bits & 8)
    fields.push_back("\"Session\":" + JsonString(input.ConsumeRandomLengthString(8), 0));
  if (!(bits & 16)) fields.push_back("\"LockIndex\":" + Index(input));
  if ((bits & 0x60) != 0x60) fields.push_back("\"CreateIndex\":" + Index(input));
  if ((bits & 0x180) != 0x180) fields.push_back("\"ModifyIndex\":" + Index(input));
  if (bits & 0x200) fields.push_back("\"Extra\":{\"a\":[1,-2.5e3,true,null,\"s\"],\"b\":{}}");
  for (size_t i = fields.size(); i > 1; --i) {  // Fisher-Yates with the input's choices
    std::swap(fields[i - 1], fields[input.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  }
  const char* space = (bits & 0x400) ? " \n\t" : "";
  std::string object = "{";
  for (size_t i = 0; i < fields.size(); ++i) {
    absl::StrAppend(&object, i == 0 ? "" : ",", space, fields[i]);
  }
  return object + space + "}";
}

}  // namespace

std::string GenerateListing(FuzzedDataProvider& input) {
  const uint8_t shape = input.ConsumeIntegral<uint8_t>();
  std::vector<std::string> keys(input.ConsumeIntegralInRange<size_t>(0, 12));
  for (std::string& key : keys) key = Key(input);
  // Consul lists keys sorted and once each; most listings do, a few do not.
  if (shape & 3) {
    std::sort(keys.begin(), keys.end());
    if (shape & 4) keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  std::string body = "[";
  for (size_t i = 0; i < keys.size(); ++i) {
    absl::StrAppend(&body, i == 0 ? "" : ",", Entry(input, keys[i]));
  }
  return body + "]";
}

}  // namespace registry::fuzz
