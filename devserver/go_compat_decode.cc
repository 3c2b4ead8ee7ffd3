// SPDX-License-Identifier: Apache-2.0
// go_compat.h: the decoders Consul's request checks rely on (paths, base64, session UUIDs).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/base64.h"
#include "base/utf8.h"
#include "devserver/go_compat.h"

namespace registry::devserver {
namespace {

absl::Status CorruptBase64(size_t offset) {
  return absl::InvalidArgumentError(absl::StrCat("illegal base64 data at input byte ", offset));
}

bool IsNewline(char c) { return c == '\n' || c == '\r'; }

// Go's decodeQuantum: up to four digits from text[*at], their bytes appended to *out; *at
// moves past what was read. Kept in Go's shape so that the error offsets come out the same.
absl::Status DecodeQuantum(absl::string_view text, size_t* at, std::string* out) {
  size_t si = *at;
  uint32_t digits[4] = {0, 0, 0, 0};
  int length = 4;
  absl::Status trailing;
  for (int j = 0; j < 4; ++j) {
    if (si == text.size()) {
      if (j == 0) {  // only newlines were left
        *at = si;
        return absl::OkStatus();
      }
      return CorruptBase64(si - static_cast<size_t>(j));  // no padding
    }
    const char in = text[si++];
    if (const int digit = Base64Digit(in); digit >= 0) {
      digits[j] = static_cast<uint32_t>(digit);
      continue;
    }
    if (IsNewline(in)) {
      --j;
      continue;
    }
    if (in != '=' || j < 2) return CorruptBase64(si - 1);
    if (j == 2) {  // "==" expected: the second '=' must follow, newlines aside
      while (si < text.size() && IsNewline(text[si])) ++si;
      if (si == text.size()) return CorruptBase64(text.size());
      if (text[si] != '=') return CorruptBase64(si - 1);
      ++si;
    }
    while (si < text.size() && IsNewline(text[si])) ++si;
    if (si < text.size()) trailing = CorruptBase64(si);  // garbage after the padding
    length = j;
    break;
  }
  *at = si;
  const uint32_t value = digits[0] << 18 | digits[1] << 12 | digits[2] << 6 | digits[3];
  const char bytes[3] = {static_cast<char>(value >> 16), static_cast<char>(value >> 8),
                         static_cast<char>(value)};
  out->append(bytes, static_cast<size_t>(length - 1));
  return trailing;
}

// Go's %#U of the rune with value `byte`: "U+007A 'z'", or "U+0001" when not printable.
std::string GoRuneVerb(uint8_t byte) {
  std::string out = absl::StrFormat("U+%04X", byte);
  if (!GoIsPrint(byte)) return out;
  out.append(" '");
  if (byte < 0x80) {
    out.push_back(static_cast<char>(byte));
  } else {  // the rune U+0080..U+00FF in UTF-8
    out.push_back(static_cast<char>(0xC0 | (byte >> 6)));
    out.push_back(static_cast<char>(0x80 | (byte & 0x3F)));
  }
  out.push_back('\'');
  return out;
}

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

bool GoPathIsPrintable(absl::string_view path) {
  for (size_t i = 0; i < path.size();) {
    const size_t length = Utf8SequenceLength(path, i);
    if (length == 0) {  // U+FFFD
      ++i;
      continue;
    }
    if (!GoIsPrint(DecodeUtf8Rune(path, i, length))) return false;
    i += length;
  }
  return true;
}

absl::Status GoBase64Decode(absl::string_view text, std::string* out) {
  out->clear();
  size_t at = 0;
  while (at < text.size()) {
    if (absl::Status status = DecodeQuantum(text, &at, out); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status CheckMemdbUuid(absl::string_view id) {
  const auto index_error = [](absl::string_view reason) {
    return absl::InvalidArgumentError(absl::StrCat("index error: ", reason));
  };
  if (id.size() != 36) return index_error("UUID must be 36 characters");
  std::string digits;
  for (const char c : id) {
    if (c != '-') digits.push_back(c);
  }
  const size_t hyphens = id.size() - digits.size();
  if (hyphens > 4) {
    return index_error(absl::StrCat("UUID should have maximum of 4 \"-\"; got ", hyphens));
  }
  if (digits.size() % 2 != 0) return index_error("Input (without hyphens) must be even length");
  // encoding/hex names the first byte, pair by pair, that is not a hex digit.
  for (const char c : digits) {
    if (!IsHexDigit(c)) {
      return index_error(absl::StrCat("Invalid UUID: encoding/hex: invalid byte: ",
                                      GoRuneVerb(static_cast<uint8_t>(c))));
    }
  }
  return absl::OkStatus();
}

}  // namespace registry::devserver
