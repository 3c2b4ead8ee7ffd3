// SPDX-License-Identifier: Apache-2.0
// base/utf8.h
//
// UTF-8 validation for code that writes JSON strings byte by byte (registryctl's event lines, the
// dev server's Go-compatible answers): both must turn exactly the bytes Go would reject into
// U+FFFD, so both use this one definition.
//
// Thread safety: pure function.
#ifndef BASE_UTF8_H_
#define BASE_UTF8_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace registry {

// Length of the valid UTF-8 sequence starting at bytes[i] (1 for ASCII), or 0 if none starts
// there. The rules are Go's utf8.DecodeRuneInString and Unicode 15 table 3-7: no overlong forms,
// no surrogates, nothing above U+10FFFF. Requires i < bytes.size().
inline size_t Utf8SequenceLength(absl::string_view bytes, size_t i) {
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

// The code point of the valid UTF-8 sequence of `length` bytes (Utf8SequenceLength) at bytes[i].
inline char32_t DecodeUtf8Rune(absl::string_view bytes, size_t i, size_t length) {
  const auto at = [&](size_t k) { return static_cast<char32_t>(static_cast<uint8_t>(bytes[k])); };
  if (length == 1) return at(i);
  static constexpr char32_t kLeadMask[] = {0, 0, 0x1F, 0x0F, 0x07};
  char32_t rune = at(i) & kLeadMask[length];
  for (size_t k = 1; k < length; ++k) rune = (rune << 6) | (at(i + k) & 0x3F);
  return rune;
}

// True iff every byte of `text` belongs to a valid UTF-8 sequence (Utf8SequenceLength's rules).
inline bool IsValidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace registry

#endif  // BASE_UTF8_H_
