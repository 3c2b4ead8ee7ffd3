// SPDX-License-Identifier: Apache-2.0
// conf/values.cc
#include "conf/values.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <system_error>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace registry::conf {
namespace {

absl::Status ValueError(absl::string_view value, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("'", value, "' ", problem));
}

// An optional sign followed by digits only: "30", "-5". Such a value is read in the prop's unit.
bool IsPlainInteger(absl::string_view text) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  return !text.empty() && std::all_of(text.begin(), text.end(), absl::ascii_isdigit);
}

bool IsDnsLabel(absl::string_view label) {
  if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
    return false;
  }
  return std::all_of(label.begin(), label.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '-' || c == '_'; });
}

bool IsHostName(absl::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (!IsDnsLabel(label)) return false;
  }
  return true;
}

// Loose IPv6 check: hex digits, ':' and '.' (IPv4-mapped tail), at least two ':'. The resolver
// has the final word; this only catches obvious mistakes before any connection is attempted.
bool IsIpv6Literal(absl::string_view host) {
  if (std::count(host.begin(), host.end(), ':') < 2) return false;
  return std::all_of(host.begin(), host.end(),
                     [](char c) { return absl::ascii_isxdigit(c) || c == ':' || c == '.'; });
}

absl::Status ValidateServerAddress(absl::string_view entry) {
  for (char c : entry) {
    if (absl::ascii_isspace(c) || absl::ascii_iscntrl(c)) {
      return ValueError(entry, "contains whitespace");
    }
  }
  absl::string_view rest = entry;
  if (size_t pos = rest.find("://"); pos != absl::string_view::npos) {
    absl::string_view scheme = rest.substr(0, pos);
    if (!absl::EqualsIgnoreCase(scheme, "http") && !absl::EqualsIgnoreCase(scheme, "https")) {
      return ValueError(entry, absl::StrCat("has scheme '", scheme, "'; expected http or https"));
    }
    rest.remove_prefix(pos + 3);
  }
  if (size_t at = rest.find('@'); at != absl::string_view::npos) {
    // Shown without what precedes '@': it may be a password.
    return absl::InvalidArgumentError(absl::StrCat(
        "'...@", rest.substr(at + 1),
        "' has user information before '@' (not shown); Consul takes no credentials in the "
        "address: set the ACL token with the token prop"));
  }
  if (rest.find('/') != absl::string_view::npos) {
    return ValueError(entry, "has a path; expected host:port");
  }
  absl::string_view host;
  absl::string_view port;
  if (absl::StartsWith(rest, "[")) {
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) return ValueError(entry, "has an unclosed '['");
    host = rest.substr(1, close - 1);
    absl::string_view after = rest.substr(close + 1);
    if (!absl::ConsumePrefix(&after, ":")) return ValueError(entry, "has no port");
    port = after;
    if (!IsIpv6Literal(host)) {
      return ValueError(entry, absl::StrCat("has an invalid IPv6 address '", host, "'"));
    }
  } else {
    size_t colon = rest.rfind(':');
    if (colon == absl::string_view::npos) return ValueError(entry, "has no port");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (host.find(':') != absl::string_view::npos) {
      return ValueError(entry, "has an IPv6 address without brackets; write [addr]:port");
    }
    if (host.empty()) return ValueError(entry, "has no host");
    if (!IsHostName(host))
      return ValueError(entry, absl::StrCat("has an invalid host '", host, "'"));
  }
  if (port.empty()) return ValueError(entry, "has no port");
  int port_number = 0;
  if (!std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port, &port_number)) {
    return ValueError(entry, absl::StrCat("has port '", port, "' which is not a number"));
  }
  if (port_number < 1 || port_number > 65535) {
    return ValueError(entry, absl::StrCat("has port ", port_number, " outside 1..65535"));
  }
  return absl::OkStatus();
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute =
          diagonal + (absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

}  // namespace

absl::StatusOr<absl::Duration> ParseDurationValue(absl::string_view text,
                                                  const DurationRule& rule) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  absl::Duration value;
  if (IsPlainInteger(trimmed)) {
    int64_t count = 0;
    if (!absl::SimpleAtoi(trimmed, &count)) return ValueError(text, "is too large");
    value = count * rule.plain_unit;
  } else if (!absl::ParseDuration(trimmed, &value) || value == absl::InfiniteDuration() ||
             value == -absl::InfiniteDuration()) {
    return ValueError(text, "is not a duration");
  }
  if (value % absl::Milliseconds(1) != absl::ZeroDuration()) {
    return ValueError(text, "is finer than a millisecond");
  }
  if (value < rule.min) {
    if (rule.min == absl::ZeroDuration()) return ValueError(text, "is negative");
    if (value <= absl::ZeroDuration()) return ValueError(text, "is not a positive duration");
    return ValueError(text,
                      absl::StrCat("is below the minimum of ", absl::FormatDuration(rule.min)));
  }
  if (value > rule.max) {
    return ValueError(text,
                      absl::StrCat("is above the maximum of ", absl::FormatDuration(rule.max)));
  }
  return value;
}

absl::StatusOr<int> ParseIntValue(absl::string_view text, int min, int max) {
  int value = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) {
    return ValueError(text, "is not a whole number");
  }
  if (value < min || value > max) {
    return ValueError(text, absl::StrCat("is not from ", min, " to ", max));
  }
  return value;
}

absl::StatusOr<bool> ParseBoolValue(absl::string_view text) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (absl::EqualsIgnoreCase(trimmed, "true")) return true;
  if (absl::EqualsIgnoreCase(trimmed, "false")) return false;
  return ValueError(text, "is not a boolean (true or false)");
}

absl::StatusOr<std::vector<std::string>> ParseServerList(absl::string_view text) {
  if (absl::StripAsciiWhitespace(text).empty()) return ValueError(text, "is an empty server list");
  std::vector<std::string> servers;
  absl::flat_hash_set<std::string> seen;
  for (absl::string_view raw : absl::StrSplit(text, ',')) {
    absl::string_view entry = absl::StripAsciiWhitespace(raw);
    if (entry.empty()) return ValueError(text, "has an empty entry between commas");
    if (absl::Status status = ValidateServerAddress(entry); !status.ok()) return status;
    if (!seen.insert(std::string(entry)).second) return ValueError(entry, "is listed twice");
    servers.emplace_back(entry);
  }
  return servers;
}

absl::Status ValidateNamespace(absl::string_view text) {
  if (text.empty()) return ValueError(text, "is empty");
  if (absl::StartsWith(text, "/") || absl::EndsWith(text, "/")) {
    return ValueError(text, "must not start or end with '/'");
  }
  for (char c : text) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.' && c != '/') {
      return ValueError(text, absl::StrCat("contains '", absl::string_view(&c, 1),
                                           "'; allowed are letters, digits, '-', '_', '.' and '/' "
                                           "between segments"));
    }
  }
  for (absl::string_view segment : absl::StrSplit(text, '/')) {
    if (segment.empty()) return ValueError(text, "has an empty segment");
    if (segment == "." || segment == "..") {
      return ValueError(text, absl::StrCat("has a '", segment, "' segment"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateDatacenter(absl::string_view text) {
  for (char c : text) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') {
      return ValueError(text, "is not a datacenter name (letters, digits, '-', '_', '.')");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateDnsName(absl::string_view text) {
  constexpr absl::string_view kRule = "is not a DNS name (labels of letters, digits and '-')";
  if (text.empty() || text.size() > 253) return ValueError(text, kRule);
  for (absl::string_view label : absl::StrSplit(text, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return ValueError(text, kRule);
    }
    for (char c : label) {
      if (!absl::ascii_isalnum(c) && c != '-') return ValueError(text, kRule);
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateToken(absl::string_view token) {
  if (token.empty()) return absl::InvalidArgumentError("is empty");
  for (char c : token) {
    if (c <= ' ' || c > '~') {
      return absl::InvalidArgumentError("contains whitespace or non-printable characters");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  auto fail = [](int error) {
    std::string message =
        absl::StrCat("cannot be read: ", std::error_code(error, std::generic_category()).message());
    if (error == ENOENT) return absl::NotFoundError(message);
    if (error == EACCES) return absl::PermissionDeniedError(message);
    return absl::InvalidArgumentError(message);
  };
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) return fail(errno);
  std::string content;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) {
    content.append(buffer, n);
    // A device such as /dev/zero, or a wrong path to a huge file, must not take the memory.
    if (content.size() > kMaxTextFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("is larger than ", kMaxTextFileBytes / (1024 * 1024), " MiB"));
    }
  }
  if (std::ferror(file.get())) return fail(errno);
  return content;
}

std::string ClosestKey(absl::string_view key, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& candidate : candidates) {
    size_t distance = EditDistance(key, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  size_t tolerance = std::max<size_t>(2, best.size() / 3);
  return best_distance <= tolerance ? best : std::string();
}

}  // namespace registry::conf
