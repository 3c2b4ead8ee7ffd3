// SPDX-License-Identifier: Apache-2.0
#include "devserver/go_compat.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/utf8.h"

namespace registry::devserver {
namespace {

constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;  // |math.MinInt64|

absl::Status Invalid(absl::string_view original) {
  return absl::InvalidArgumentError(absl::StrCat("time: invalid duration \"", original, "\""));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Returns the nanoseconds per `unit`, or 0 when Go does not know the unit.
uint64_t UnitNanos(absl::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1000;  // µ, μ
  if (unit == "ms") return 1000 * 1000;
  if (unit == "s") return 1000 * 1000 * 1000;
  if (unit == "m") return uint64_t{60} * 1000 * 1000 * 1000;
  if (unit == "h") return uint64_t{3600} * 1000 * 1000 * 1000;
  return 0;
}

// Appends `value` / 10^digits as ".ddd" with trailing zeros removed (nothing if zero).
void AppendFraction(std::string* out, uint64_t value, int digits) {
  std::string fraction;
  bool significant = false;
  for (int i = 0; i < digits; ++i) {
    int digit = static_cast<int>(value % 10);
    value /= 10;
    significant = significant || digit != 0;
    if (significant) fraction.insert(fraction.begin(), static_cast<char>('0' + digit));
  }
  if (!fraction.empty()) absl::StrAppend(out, ".", fraction);
}

}  // namespace

// Long by design: a step-by-step port of Go's time.ParseDuration (overflow checks and messages
// included), kept whole so that it reads side by side with the original.
absl::StatusOr<absl::Duration> ParseGoDuration(absl::string_view text) {
  const absl::string_view original = text;
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text == "0") return absl::ZeroDuration();
  if (text.empty()) return Invalid(original);

  uint64_t total = 0;
  while (!text.empty()) {
    if (text[0] != '.' && !IsDigit(text[0])) return Invalid(original);
    // Integer part; overflow is an error, as in Go.
    uint64_t whole = 0;
    size_t i = 0;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (whole > (kMaxMagnitude - 1) / 10) return Invalid(original);
      whole = whole * 10 + static_cast<uint64_t>(text[i] - '0');
      if (whole > kMaxMagnitude) return Invalid(original);
    }
    const bool has_whole = i > 0;
    text.remove_prefix(i);
    // Fraction part; digits beyond int64 precision are ignored, as in Go.
    uint64_t fraction = 0;
    double scale = 1;
    bool has_fraction = false;
    if (!text.empty() && text[0] == '.') {
      text.remove_prefix(1);
      bool overflow = false;
      size_t j = 0;
      for (; j < text.size() && IsDigit(text[j]); ++j) {
        if (overflow) continue;
        if (fraction > (std::numeric_limits<int64_t>::max()) / 10) {
          overflow = true;
          continue;
        }
        uint64_t next = fraction * 10 + static_cast<uint64_t>(text[j] - '0');
        if (next > kMaxMagnitude) {
          overflow = true;
          continue;
        }
        fraction = next;
        scale *= 10;
      }
      has_fraction = j > 0;
      text.remove_prefix(j);
    }
    if (!has_whole && !has_fraction) return Invalid(original);

    size_t unit_length = 0;
    while (unit_length < text.size() && text[unit_length] != '.' && !IsDigit(text[unit_length])) {
      ++unit_length;
    }
    if (unit_length == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: missing unit in duration \"", original, "\""));
    }
    const absl::string_view unit_text = text.substr(0, unit_length);
    text.remove_prefix(unit_length);
    const uint64_t unit = UnitNanos(unit_text);
    if (unit == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: unknown unit \"", unit_text, "\" in duration \"", original, "\""));
    }
    if (whole > kMaxMagnitude / unit) return Invalid(original);
    whole *= unit;
    if (fraction > 0) {
      whole += static_cast<uint64_t>(static_cast<double>(fraction) *
                                     (static_cast<double>(unit) / scale));
      if (whole > kMaxMagnitude) return Invalid(original);
    }
    total += whole;
    if (total > kMaxMagnitude) return Invalid(original);
  }
  if (negative) {
    if (total == kMaxMagnitude) return absl::Nanoseconds(std::numeric_limits<int64_t>::min());
    return -absl::Nanoseconds(static_cast<int64_t>(total));
  }
  if (total > kMaxMagnitude - 1) return Invalid(original);
  return absl::Nanoseconds(static_cast<int64_t>(total));
}

std::string FormatGoDuration(absl::Duration d) {
  int64_t nanos;
  if (d >= absl::Nanoseconds(std::numeric_limits<int64_t>::max())) {
    nanos = std::numeric_limits<int64_t>::max();
  } else if (d <= absl::Nanoseconds(std::numeric_limits<int64_t>::min())) {
    nanos = std::numeric_limits<int64_t>::min();
  } else {
    nanos = absl::ToInt64Nanoseconds(d);
  }
  if (nanos == 0) return "0s";
  const bool negative = nanos < 0;
  // Magnitude as unsigned so that MinInt64 stays representable.
  const uint64_t u =
      negative ? uint64_t{0} - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  std::string out = negative ? "-" : "";
  constexpr uint64_t kSecond = 1000 * 1000 * 1000;
  if (u < kSecond) {
    if (u < 1000) {
      absl::StrAppend(&out, u, "ns");
    } else if (u < 1000 * 1000) {
      absl::StrAppend(&out, u / 1000);
      AppendFraction(&out, u % 1000, 3);
      absl::StrAppend(&out, "\xC2\xB5s");
    } else {
      absl::StrAppend(&out, u / (1000 * 1000));
      AppendFraction(&out, u % (1000 * 1000), 6);
      absl::StrAppend(&out, "ms");
    }
    return out;
  }
  const uint64_t seconds = u / kSecond;
  const uint64_t hours = seconds / 3600;
  const uint64_t minutes = (seconds / 60) % 60;
  if (hours > 0) absl::StrAppend(&out, hours, "h");
  if (hours > 0 || minutes > 0) absl::StrAppend(&out, minutes, "m");
  absl::StrAppend(&out, seconds % 60);
  AppendFraction(&out, u % kSecond, 9);
  absl::StrAppend(&out, "s");
  return out;
}

absl::StatusOr<uint64_t> ParseGoUint(absl::string_view text) {
  auto syntax = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.ParseUint: parsing ", GoQuote(text), ": invalid syntax"));
  };
  if (text.empty()) return syntax();
  uint64_t value = 0;
  bool overflow = false;
  for (char c : text) {
    if (!IsDigit(c)) return syntax();
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) overflow = true;
    value = value * 10 + digit;
  }
  if (overflow) {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.ParseUint: parsing ", GoQuote(text), ": value out of range"));
  }
  return value;
}

std::string GoQuote(absl::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

void AppendGoJsonString(absl::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    // Copy the longest run that needs no escaping in one append.
    size_t run = i;
    while (run < text.size()) {
      const unsigned char c = static_cast<unsigned char>(text[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80) break;
      ++run;
    }
    out->append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\b':
          out->append("\\b");
          break;
        case '\f':
          out->append("\\f");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        default:  // other control bytes, and Go's HTML-safe <, >, &
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
      }
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      out->append("\\ufffd");
      ++i;
    } else if (text.substr(i, length) == "\xE2\x80\xA8" ||
               text.substr(i, length) == "\xE2\x80\xA9") {
      out->append(text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029");
      i += length;
    } else {
      out->append(text.data() + i, length);
      i += length;
    }
  }
  out->push_back('"');
}

std::string GoCleanPath(absl::string_view path) {
  std::vector<absl::string_view> kept;
  for (absl::string_view element : absl::StrSplit(path, '/')) {
    if (element.empty() || element == ".") continue;
    if (element == "..") {
      if (!kept.empty()) kept.pop_back();
      continue;
    }
    kept.push_back(element);
  }
  std::string clean = absl::StrCat("/", absl::StrJoin(kept, "/"));
  if (absl::EndsWith(path, "/") && clean != "/") clean.push_back('/');
  return clean;
}

std::string GoEscapePath(absl::string_view path) {
  std::string out;
  for (const char c : path) {
    if (absl::ascii_isalnum(c) || absl::StrContains("-._~$&+,/:;=@", c)) {
      out.push_back(c);
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back("0123456789ABCDEF"[byte >> 4]);
      out.push_back("0123456789ABCDEF"[byte & 0xF]);
    }
  }
  return out;
}

}  // namespace registry::devserver
