// SPDX-License-Identifier: Apache-2.0
// go_json.h: GoFirstJsonValue, a port of the checks of Go's encoding/json scanner, so that a
// body that is not JSON gets the text Consul answers with ("invalid character '}' after object
// key", "unexpected EOF", ...).
#include <string>

#include "absl/strings/str_cat.h"
#include "devserver/go_compat.h"
#include "devserver/go_json.h"

namespace registry::devserver {
namespace {

constexpr int kMaxNestingDepth = 10000;  // Go's maxNestingDepth

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Go's quoteChar: the byte as a Go character literal ('x', '\'', '"', '\n', '\x01', '\u00a0').
std::string QuoteChar(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  std::string rune;  // string(c) in Go: the rune U+00XX in UTF-8
  if (c < 0x80) {
    rune.push_back(static_cast<char>(c));
  } else {
    rune.push_back(static_cast<char>(0xC0 | (c >> 6)));
    rune.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  if (c >= 0x80 && !GoIsPrint(c)) {
    static constexpr char kHex[] = "0123456789abcdef";
    return absl::StrCat("'\\u00", std::string(1, kHex[c >> 4]), std::string(1, kHex[c & 0xF]), "'");
  }
  const std::string quoted = GoQuote(rune);  // escapes controls as Go's %q does
  return absl::StrCat("'", quoted.substr(1, quoted.size() - 2), "'");
}

// Recursive descent over the bytes, with the error of the scanner state Go would be in.
class Scanner {
 public:
  explicit Scanner(absl::string_view text) : text_(text) {}

  absl::StatusOr<size_t> FirstValue() {
    SkipSpace();
    if (AtEnd()) return absl::InvalidArgumentError("EOF");
    if (absl::Status status = Value(0); !status.ok()) return status;
    return pos_;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(Peek())) ++pos_;
  }
  absl::Status Invalid(absl::string_view context) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid character ", QuoteChar(static_cast<unsigned char>(Peek())), " ", context));
  }
  static absl::Status UnexpectedEof() { return absl::InvalidArgumentError("unexpected EOF"); }

  absl::Status Value(int depth) {
    SkipSpace();
    if (AtEnd()) return UnexpectedEof();
    const char c = Peek();
    if (c == '{' || c == '[') {
      if (depth >= kMaxNestingDepth) return Invalid("exceeded max depth");
      return c == '{' ? Object(depth + 1) : Array(depth + 1);
    }
    if (c == '"') return String();
    if (c == '-' || IsDigit(c)) return Number();
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    return Invalid("looking for beginning of value");
  }

  absl::Status Object(int depth) {
    ++pos_;
    SkipSpace();
    if (AtEnd()) return UnexpectedEof();
    if (Peek() == '}') {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      if (Peek() != '"') return Invalid("looking for beginning of object key string");
      if (absl::Status status = String(); !status.ok()) return status;
      SkipSpace();
      if (AtEnd()) return UnexpectedEof();
      if (Peek() != ':') return Invalid("after object key");
      ++pos_;
      if (absl::Status status = Value(depth); !status.ok()) return status;
      SkipSpace();
      if (AtEnd()) return UnexpectedEof();
      if (Peek() == '}') {
        ++pos_;
        return absl::OkStatus();
      }
      if (Peek() != ',') return Invalid("after object key:value pair");
      ++pos_;
      SkipSpace();
      if (AtEnd()) return UnexpectedEof();
    }
  }

  absl::Status Array(int depth) {
    ++pos_;
    SkipSpace();
    if (AtEnd()) return UnexpectedEof();
    if (Peek() == ']') {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      if (absl::Status status = Value(depth); !status.ok()) return status;
      SkipSpace();
      if (AtEnd()) return UnexpectedEof();
      if (Peek() == ']') {
        ++pos_;
        return absl::OkStatus();
      }
      if (Peek() != ',') return Invalid("after array element");
      ++pos_;
    }
  }

  absl::Status String() {
    ++pos_;
    while (true) {
      if (AtEnd()) return UnexpectedEof();
      const auto c = static_cast<unsigned char>(Peek());
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (c < 0x20) return Invalid("in string literal");
      ++pos_;
      if (c != '\\') continue;
      if (AtEnd()) return UnexpectedEof();
      const char escape = Peek();
      if (escape == 'u') {
        ++pos_;
        for (int i = 0; i < 4; ++i, ++pos_) {
          if (AtEnd()) return UnexpectedEof();
          if (!IsHex(Peek())) return Invalid("in \\u hexadecimal character escape");
        }
      } else if (absl::string_view("\"\\/bfnrt").find(escape) != absl::string_view::npos) {
        ++pos_;
      } else {
        return Invalid("in string escape code");
      }
    }
  }

  // Digits from pos_; the first must be one, else `context` names the error.
  absl::Status Digits(absl::string_view context) {
    if (AtEnd()) return UnexpectedEof();
    if (!IsDigit(Peek())) return Invalid(context);
    while (!AtEnd() && IsDigit(Peek())) ++pos_;
    return absl::OkStatus();
  }

  absl::Status Number() {
    if (Peek() == '-') {
      ++pos_;
      if (AtEnd()) return UnexpectedEof();
      if (!IsDigit(Peek())) return Invalid("in numeric literal");
    }
    if (Peek() == '0') {
      ++pos_;  // a leading zero ends the integer part
    } else {
      while (!AtEnd() && IsDigit(Peek())) ++pos_;
    }
    if (!AtEnd() && Peek() == '.') {
      ++pos_;
      if (absl::Status status = Digits("after decimal point in numeric literal"); !status.ok()) {
        return status;
      }
    }
    if (!AtEnd() && (Peek() == 'e' || Peek() == 'E')) {
      ++pos_;
      if (!AtEnd() && (Peek() == '+' || Peek() == '-')) ++pos_;
      return Digits("in exponent of numeric literal");
    }
    return absl::OkStatus();
  }

  absl::Status Literal(absl::string_view word) {
    ++pos_;
    for (size_t i = 1; i < word.size(); ++i, ++pos_) {
      if (AtEnd()) return UnexpectedEof();
      if (Peek() != word[i]) {
        return Invalid(absl::StrCat("in literal ", word, " (expecting '", word.substr(i, 1), "')"));
      }
    }
    return absl::OkStatus();
  }

  const absl::string_view text_;
  size_t pos_ = 0;
};

// The code unit of the \uXXXX escape at json[at] ('\\' included), or -1 if there is none.
int EscapedUnit(absl::string_view json, size_t at) {
  if (at + 6 > json.size() || json[at] != '\\' || json[at + 1] != 'u') return -1;
  int unit = 0;
  for (size_t i = at + 2; i < at + 6; ++i) {
    const char c = json[i];
    if (!IsHex(c)) return -1;
    unit = unit * 16 + (IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return unit;
}

bool IsHighSurrogate(int unit) { return unit >= 0xD800 && unit <= 0xDBFF; }
bool IsLowSurrogate(int unit) { return unit >= 0xDC00 && unit <= 0xDFFF; }

}  // namespace

std::string GoSurrogatesReplaced(absl::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size();) {
    if (json[i] != '\\') {
      out.push_back(json[i++]);
      continue;
    }
    const int unit = EscapedUnit(json, i);
    if (unit < 0) {  // another escape: copied whole, so that "\\u" is not read as one
      absl::StrAppend(&out, json.substr(i, 2));
      i += 2;
    } else if (IsHighSurrogate(unit) && IsLowSurrogate(EscapedUnit(json, i + 6))) {
      absl::StrAppend(&out, json.substr(i, 12));
      i += 12;
    } else {
      const bool lone = IsHighSurrogate(unit) || IsLowSurrogate(unit);
      absl::StrAppend(&out, lone ? absl::string_view("\\ufffd") : json.substr(i, 6));
      i += 6;
    }
  }
  return out;
}

absl::StatusOr<absl::string_view> GoFirstJsonValue(absl::string_view body) {
  absl::StatusOr<size_t> end = Scanner(body).FirstValue();
  if (!end.ok()) return end.status();
  return body.substr(0, *end);
}

}  // namespace registry::devserver
