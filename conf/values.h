// SPDX-License-Identifier: Apache-2.0
// conf/values.h
//
// Parsers for the scalar values of the registry props (durations, booleans, server lists,
// namespaces, secret files). Internal to conf/; the public API is conf/registry_config.h.
//
// Every error is InvalidArgument and its message describes only the value ("'3x' is not a
// duration"); the caller prefixes the key and appends the location.
//
// Thread safety: all functions are pure except ReadTextFile, which reads the file system.
#ifndef REGISTRY_CONF_VALUES_H_
#define REGISTRY_CONF_VALUES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::conf {

// Accepted range and the unit of a plain number for one duration-valued prop.
struct DurationRule {
  absl::Duration plain_unit;  // what "30" means: absl::Seconds(1) or absl::Milliseconds(1)
  absl::Duration min;         // inclusive; absl::ZeroDuration() allows 0
  absl::Duration max;         // inclusive
};

// Parses a plain integer (in `rule.plain_unit`) or a Go-style duration ("30s", "1500ms",
// "1m30s"). Surrounding whitespace is ignored. Guarantees the result is finite, a whole number
// of milliseconds and within [rule.min, rule.max].
absl::StatusOr<absl::Duration> ParseDurationValue(absl::string_view text, const DurationRule& rule);

// Parses a decimal integer within [min, max] (surrounding whitespace ignored).
absl::StatusOr<int> ParseIntValue(absl::string_view text, int min, int max);

// Parses "true" or "false" in any letter case (surrounding whitespace ignored).
absl::StatusOr<bool> ParseBoolValue(absl::string_view text);

// Splits a comma-separated server list ("a:8500, https://b:8501") into trimmed entries, each
// "host:port" or "http(s)://host:port" with host a DNS name, an IPv4 address or a bracketed IPv6
// address and port in 1..65535. Guarantees a non-empty result without empty or repeated
// entries; the entries keep their spelling.
absl::StatusOr<std::vector<std::string>> ParseServerList(absl::string_view text);

// Accepts a namespace of '/'-separated segments made of letters, digits, '-', '_' and '.',
// with no empty segment (so no '/' at either end), no "." or ".." segment.
absl::Status ValidateNamespace(absl::string_view text);

// Returns OK iff `token` is usable as an ACL token header value: non-empty, printable ASCII
// without whitespace. The message ("is empty", "contains ...") never contains the token.
absl::Status ValidateToken(absl::string_view token);

// The largest file ReadTextFile reads (a YAML, a token, a CA bundle are far smaller).
inline constexpr size_t kMaxTextFileBytes = 4 * 1024 * 1024;

// Returns the whole content of the file at `path`. Errors: NotFound if it does not exist,
// PermissionDenied if it may not be read, InvalidArgument otherwise (e.g. a directory, or more
// than kMaxTextFileBytes). The message is "cannot be read: <system's reason>" or "is larger than
// 4 MiB"; the caller names the file.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// Accepts a datacenter name: empty (the agent's own) or letters, digits, '-', '_' and '.'.
absl::Status ValidateDatacenter(absl::string_view text);

// Accepts a DNS name for TLS verification ("server.dc1.consul"): dot-separated labels of 1 to 63
// letters, digits and '-', no label starting or ending with '-', at most 253 characters.
absl::Status ValidateDnsName(absl::string_view text);

// Returns the candidate closest to `key` (edit distance, ignoring letter case) if it is close
// enough to be a plausible typo, else the empty string.
std::string ClosestKey(absl::string_view key, const std::vector<std::string>& candidates);

}  // namespace registry::conf

#endif  // REGISTRY_CONF_VALUES_H_
