// SPDX-License-Identifier: Apache-2.0
#include "consul/kv_listing_decoder.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/utf8.h"
#include "consul/errors.h"

namespace registry::consul {
namespace {

class Scanner {
 public:
  explicit Scanner(absl::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool AtEnd() {
    SkipSpace();
    return p_ == end_;
  }
  // Consumes `c` (after white space) if it is next.
  bool Consume(char c) {
    SkipSpace();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool ConsumeLiteral(absl::string_view literal) {
    SkipSpace();
    if (static_cast<size_t>(end_ - p_) < literal.size() ||
        absl::string_view(p_, literal.size()) != literal) {
      return false;
    }
    p_ += literal.size();
    return true;
  }

  // Reads a string: `*out` views the body when the string has no escapes (the common case),
  // else `*scratch`, which receives the decoded text.
  bool String(absl::string_view* out, std::string* scratch) {
    if (!Consume('"')) return false;
    const char* start = p_;
    if (!SkipText()) return false;
    if (p_ < end_ && *p_ == '"') {
      *out = absl::string_view(start, p_ - start);
      ++p_;
      return true;
    }
    scratch->assign(start, p_ - start);
    while (p_ < end_) {
      if (static_cast<unsigned char>(*p_) < 0x20) return false;
      if (*p_ == '"') {
        ++p_;
        *out = *scratch;
        return true;
      }
      ++p_;  // backslash
      if (p_ == end_ || !Escape(scratch)) return false;
      const char* run = p_;
      if (!SkipText()) return false;
      scratch->append(run, p_ - run);
    }
    return false;
  }

  bool Uint(uint64_t* out) {
    SkipSpace();
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0' && end_ - p_ > 1 && IsDigit(p_[1])) return false;  // JSON has no "07"
    uint64_t value = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      const uint64_t digit = static_cast<uint64_t>(*p_ - '0');
      if (value > (UINT64_MAX - digit) / 10) return false;
      value = value * 10 + digit;
      ++p_;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    *out = value;
    return true;
  }

  // Skips one JSON value of any type.
  bool SkipValue(int depth = 0) {
    if (depth > 32) return false;
    SkipSpace();
    if (p_ == end_) return false;
    switch (*p_) {
      case '"': {
        absl::string_view ignored;
        return String(&ignored, &scratch_);
      }
      case '{':
      case '[': {
        const char close = *p_ == '{' ? '}' : ']';
        const bool object = *p_ == '{';
        ++p_;
        if (Consume(close)) return true;
        do {
          if (object) {
            absl::string_view ignored;
            if (!String(&ignored, &scratch_) || !Consume(':')) return false;
          }
          if (!SkipValue(depth + 1)) return false;
        } while (Consume(','));
        return Consume(close);
      }
      case 't':
        return ConsumeLiteral("true");
      case 'f':
        return ConsumeLiteral("false");
      case 'n':
        return ConsumeLiteral("null");
      default:
        return SkipNumber();
    }
  }

 private:
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  // Skips digits; false if there is none.
  bool SkipDigits() {
    const char* start = p_;
    while (p_ < end_ && IsDigit(*p_)) ++p_;
    return p_ != start;
  }

  // Skips one JSON number, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, as the general parser
  // reads it. That parser refuses a number beyond a double's range (1e999); this one gives up on
  // any number whose magnitude comes near it, which no field Consul sends ever has.
  bool SkipNumber() {
    if (p_ < end_ && *p_ == '-') ++p_;
    const char* integer = p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!SkipDigits()) {
      return false;
    }
    // The power of ten of the first nonzero digit, without the exponent.
    int64_t magnitude = *integer == '0' ? 0 : p_ - integer - 1;
    bool nonzero = *integer != '0';
    if (p_ < end_ && *p_ == '.') {
      const char* fraction = ++p_;
      if (!SkipDigits()) return false;
      if (!nonzero) {
        const char* first = fraction;
        while (first < p_ && *first == '0') ++first;
        nonzero = first < p_;
        magnitude = -(first - fraction) - 1;
      }
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      const bool negative = p_ < end_ && *p_ == '-';
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const char* digits = p_;
      if (!SkipDigits()) return false;
      int64_t exponent = 0;
      for (const char* d = digits; d < p_ && exponent < 100000; ++d) {
        exponent = exponent * 10 + (*d - '0');
      }
      magnitude += negative ? -exponent : exponent;
    }
    return !nonzero || magnitude < 300;
  }

  // Skips characters that need no decoding: ASCII without quotes, backslashes or control
  // characters, and well-formed UTF-8 sequences. False at a byte that is not UTF-8: JSON text is
  // UTF-8, so the general parser refuses such a body, and so must this one.
  bool SkipText() {
    while (true) {
      SkipPlain();
      if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x80) return true;
      if (!SkipUtf8()) return false;
    }
  }

  // Skips ASCII characters that need no decoding. Eight bytes per step while none of them is a
  // quote, a backslash, a control character or a non-ASCII byte (the whole body goes through
  // here).
  void SkipPlain() {
    constexpr uint64_t kOnes = 0x0101010101010101ULL;
    constexpr uint64_t kHighs = 0x8080808080808080ULL;
    // Nonzero iff some byte of `v` is below `n` (n <= 128), or is zero for n == 1.
    const auto any_below = [](uint64_t v, uint64_t n) { return (v - kOnes * n) & ~v & kHighs; };
    while (end_ - p_ >= 8) {
      uint64_t word;
      std::memcpy(&word, p_, sizeof(word));
      if (any_below(word ^ (kOnes * '"'), 1) | any_below(word ^ (kOnes * '\\'), 1) |
          any_below(word, 0x20) | (word & kHighs)) {
        break;
      }
      p_ += 8;
    }
    while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20 &&
           static_cast<unsigned char>(*p_) < 0x80) {
      ++p_;
    }
  }

  // Skips one UTF-8 sequence of two to four bytes (base/utf8.h's rules), or returns false.
  bool SkipUtf8() {
    const size_t length = Utf8SequenceLength(absl::string_view(p_, end_ - p_), 0);
    if (length < 2) return false;
    p_ += length;
    return true;
  }

  // Decodes the escape after a backslash into `out`.
  bool Escape(std::string* out) {
    const char escape = *p_++;
    switch (escape) {
      case '"':
      case '\\':
      case '/':
        out->push_back(escape);
        return true;
      case 'b':
        out->push_back('\b');
        return true;
      case 'f':
        out->push_back('\f');
        return true;
      case 'n':
        out->push_back('\n');
        return true;
      case 'r':
        out->push_back('\r');
        return true;
      case 't':
        out->push_back('\t');
        return true;
      case 'u': {
        uint32_t code = 0;
        if (!Hex4(&code)) return false;
        if (code >= 0xD800 && code <= 0xDBFF) {  // high surrogate: a low one must follow
          uint32_t low = 0;
          if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
          p_ += 2;
          if (!Hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code <= 0xDFFF) {
          return false;
        }
        AppendUtf8(code, out);
        return true;
      }
      default:
        return false;
    }
  }

  bool Hex4(uint32_t* out) {
    if (end_ - p_ < 4) return false;
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *out = value;
    return true;
  }

  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  const char* p_;
  const char* end_;
  std::string scratch_;  // for strings that are skipped
};

// Buffers for strings with escapes, one per field kept, reused from entry to entry.
struct EntryScratch {
  std::string name, key, value, session;
};

bool ParseEntry(Scanner& scan, ListingEntryView* entry, EntryScratch* scratch) {
  if (!scan.Consume('{')) return false;
  *entry = ListingEntryView();
  bool has_key = false, has_create = false, has_modify = false;
  if (scan.Consume('}')) return false;
  do {
    absl::string_view name;
    if (!scan.String(&name, &scratch->name) || !scan.Consume(':')) return false;
    if (name == "Key") {
      if (!scan.String(&entry->key, &scratch->key)) return false;
      has_key = true;
    } else if (name == "Value") {
      if (scan.ConsumeLiteral("null")) {
        entry->value_base64 = {};
      } else if (!scan.String(&entry->value_base64, &scratch->value)) {
        return false;
      }
    } else if (name == "Flags") {
      if (!scan.Uint(&entry->flags)) return false;
    } else if (name == "Session") {
      if (!scan.String(&entry->session, &scratch->session)) return false;
    } else if (name == "LockIndex") {
      if (!scan.Uint(&entry->lock_index)) return false;
    } else if (name == "CreateIndex") {
      if (!scan.Uint(&entry->create_index)) return false;
      has_create = true;
    } else if (name == "ModifyIndex") {
      if (!scan.Uint(&entry->modify_index)) return false;
      has_modify = true;
    } else if (!scan.SkipValue()) {
      return false;
    }
  } while (scan.Consume(','));
  return scan.Consume('}') && has_key && has_create && has_modify;
}

}  // namespace

bool ForEachListingEntry(absl::string_view body,
                         absl::FunctionRef<bool(const ListingEntryView&)> visit) {
  Scanner scan(body);
  if (!scan.Consume('[')) return false;
  if (!scan.Consume(']')) {
    EntryScratch scratch;
    ListingEntryView entry;
    do {
      if (!ParseEntry(scan, &entry, &scratch) || !visit(entry)) return false;
    } while (scan.Consume(','));
    if (!scan.Consume(']')) return false;
  }
  return scan.AtEnd();
}

absl::StatusOr<QueryMeta> ParseKvReadAnswer(const HttpRequest& request,
                                            const absl::StatusOr<HttpResponse>& response) {
  if (!response.ok()) return response.status();
  if (response->status != 200 && response->status != 404) {
    absl::Status error = ErrorFromResponse(request, *response);
    return error.ok() ? absl::InternalError(absl::StrCat("HTTP ", response->status)) : error;
  }
  return ParseQueryMeta(request, *response);
}

bool KvReadFound(const HttpResponse& response) { return response.status == 200; }

}  // namespace registry::consul
