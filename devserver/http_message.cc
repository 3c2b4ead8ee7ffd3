// SPDX-License-Identifier: Apache-2.0
#include "devserver/http_message.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace registry::devserver {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<std::string> Unescape(absl::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size() || HexValue(text[i + 1]) < 0 || HexValue(text[i + 2]) < 0) {
        absl::string_view bad = text.substr(i, 3);
        return absl::InvalidArgumentError(absl::StrCat("invalid URL escape \"", bad, "\""));
      }
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

bool Unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

std::string QueryEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (Unreserved(c)) {
      out += c;
    } else if (c == ' ') {
      out += '+';
    } else {
      absl::StrAppend(&out, "%", absl::StrFormat("%02X", static_cast<unsigned char>(c)));
    }
  }
  return out;
}

}  // namespace

bool HttpRequest::Has(absl::string_view name) const {
  return std::any_of(query.begin(), query.end(), [&](const auto& kv) { return kv.first == name; });
}

std::string HttpRequest::Get(absl::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return value;
  }
  return "";
}

absl::StatusOr<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
ParseTarget(absl::string_view target) {
  absl::string_view raw_path = target;
  absl::string_view raw_query;
  if (size_t mark = target.find('?'); mark != absl::string_view::npos) {
    raw_path = target.substr(0, mark);
    raw_query = target.substr(mark + 1);
  }
  if (size_t hash = raw_query.find('#'); hash != absl::string_view::npos) {
    raw_query = raw_query.substr(0, hash);
  }
  absl::StatusOr<std::string> path = Unescape(raw_path, false);
  if (!path.ok()) return path.status();
  std::vector<std::pair<std::string, std::string>> query;
  if (!raw_query.empty()) {
    for (absl::string_view part : absl::StrSplit(raw_query, '&')) {
      if (part.empty()) continue;
      absl::string_view key = part;
      absl::string_view value;
      if (size_t eq = part.find('='); eq != absl::string_view::npos) {
        key = part.substr(0, eq);
        value = part.substr(eq + 1);
      }
      absl::StatusOr<std::string> decoded_key = Unescape(key, true);
      if (!decoded_key.ok()) return decoded_key.status();
      absl::StatusOr<std::string> decoded_value = Unescape(value, true);
      if (!decoded_value.ok()) return decoded_value.status();
      query.emplace_back(*std::move(decoded_key), *std::move(decoded_value));
    }
  }
  return std::make_pair(*std::move(path), std::move(query));
}

std::string EncodeQuery(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> sorted = query;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [key, value] : sorted) {
    if (!out.empty()) out += '&';
    absl::StrAppend(&out, QueryEscape(key), "=", QueryEscape(value));
  }
  return out;
}

absl::string_view RawQuery(absl::string_view target) {
  const size_t question = target.find('?');
  return question == absl::string_view::npos ? absl::string_view() : target.substr(question + 1);
}

std::string HttpDate(absl::Time time) {
  return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", time, absl::UTCTimeZone());
}

}  // namespace registry::devserver
