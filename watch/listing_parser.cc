#include "watch/listing_parser.h"

#include <cctype>
#include <cstdint>
#include <string>

#include "absl/strings/escaping.h"

namespace registry::watch {
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

  bool String(std::string* out) {
    if (!Consume('"')) return false;
    out->clear();
    while (p_ < end_) {
      const char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) {
        ++p_;
      }
      out->append(run, p_ - run);
      if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x20) return false;
      if (*p_ == '"') {
        ++p_;
        return true;
      }
      ++p_;  // backslash
      if (p_ == end_) return false;
      const char escape = *p_++;
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out->push_back(escape);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
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
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  bool Uint(uint64_t* out) {
    SkipSpace();
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
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
        std::string ignored;
        return String(&ignored);
      }
      case '{':
      case '[': {
        const char close = *p_ == '{' ? '}' : ']';
        const bool object = *p_ == '{';
        ++p_;
        if (Consume(close)) return true;
        do {
          if (object) {
            std::string ignored;
            if (!String(&ignored) || !Consume(':')) return false;
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
      default: {
        const char* start = p_;
        while (p_ < end_ && (std::isdigit(static_cast<unsigned char>(*p_)) || *p_ == '-' ||
                             *p_ == '+' || *p_ == '.' || *p_ == 'e' || *p_ == 'E')) {
          ++p_;
        }
        return p_ != start;
      }
    }
  }

 private:
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
};

bool ParseEntry(Scanner& scan, consul::DirEntry* entry, std::string* scratch) {
  if (!scan.Consume('{')) return false;
  bool has_key = false, has_create = false, has_modify = false;
  if (scan.Consume('}')) return false;
  do {
    std::string& name = *scratch;
    if (!scan.String(&name) || !scan.Consume(':')) return false;
    if (name == "Key") {
      if (!scan.String(&entry->key)) return false;
      has_key = true;
    } else if (name == "Value") {
      if (scan.ConsumeLiteral("null")) {
        entry->value.clear();
      } else {
        std::string encoded;
        if (!scan.String(&encoded) || !absl::Base64Unescape(encoded, &entry->value)) return false;
      }
    } else if (name == "Flags") {
      if (!scan.Uint(&entry->flags)) return false;
    } else if (name == "Session") {
      if (!scan.String(&entry->session)) return false;
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

std::optional<std::vector<consul::DirEntry>> ParseListingBody(absl::string_view body) {
  Scanner scan(body);
  std::vector<consul::DirEntry> entries;
  if (!scan.Consume('[')) return std::nullopt;
  if (!scan.Consume(']')) {
    std::string scratch;
    do {
      consul::DirEntry entry;
      if (!ParseEntry(scan, &entry, &scratch)) return std::nullopt;
      entries.push_back(std::move(entry));
    } while (scan.Consume(','));
    if (!scan.Consume(']')) return std::nullopt;
  }
  if (!scan.AtEnd()) return std::nullopt;
  return entries;
}

}  // namespace registry::watch
