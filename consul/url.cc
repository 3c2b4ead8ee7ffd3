// SPDX-License-Identifier: Apache-2.0
#include "consul/url.h"

#include "absl/strings/ascii.h"

namespace registry::consul {
namespace {

bool IsUnreserved(unsigned char c) {
  return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

std::string Escape(absl::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

}  // namespace

std::string EscapeKeyPath(absl::string_view key) { return Escape(key, /*keep_slash=*/true); }

std::string EscapeComponent(absl::string_view text) { return Escape(text, /*keep_slash=*/false); }

std::string BuildUrl(const HttpRequest& request) {
  std::string url = request.server + request.path;
  char separator = '?';
  for (const auto& [name, value] : request.params) {
    url.push_back(separator);
    separator = '&';
    url += EscapeComponent(name);
    if (!value.empty()) {
      url.push_back('=');
      url += EscapeComponent(value);
    }
  }
  return url;
}

}  // namespace registry::consul
