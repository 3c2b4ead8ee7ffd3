// SPDX-License-Identifier: Apache-2.0
// Fuzz target: conf::ParseRegistryYaml on arbitrary text. It must never crash, hang or leak
// (yaml-cpp throws on bad input; no exception may escape), and every config it accepts must
// satisfy the promises of RegistryConfig's field comments, which the rest of the plugin relies
// on without checking again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/registry_config.h"

namespace {

using registry::conf::RegistryConfig;

// '/'-separated segments of letters, digits, '-', '_', '.'; no '/' at either end.
bool NamespaceOk(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.back() == '/') return false;
  if (absl::StrContains(name, "//")) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.' && c != '/') return false;
  }
  return true;
}

bool PrintableToken(const std::string& token) {
  for (char c : token) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

bool InRange(absl::Duration d, absl::Duration low, absl::Duration high, bool low_inclusive) {
  return (low_inclusive ? d >= low : d > low) && d <= high;
}

// The promises of registry_config.h for a config ParseRegistryYaml returned.
bool Valid(const RegistryConfig& config) {
  const absl::Duration day = absl::Hours(24);
  if (!NamespaceOk(config.namespace_name) || config.servers.empty()) return false;
  for (const std::string& server : config.servers) {
    if (server.empty() || server.front() == ' ' || server.back() == ' ') return false;
  }
  if (!PrintableToken(config.token)) return false;
  return InRange(config.session_ttl, absl::ZeroDuration(), day, false) &&
         InRange(config.block_query_wait, absl::ZeroDuration(), absl::Minutes(10), false) &&
         config.block_query_wait % absl::Milliseconds(1) == absl::ZeroDuration() &&
         InRange(config.connect_timeout, absl::ZeroDuration(), day, false) &&
         InRange(config.request_timeout, absl::ZeroDuration(), day, false) &&
         InRange(config.session_lock_delay, absl::ZeroDuration(), absl::Seconds(60), true) &&
         InRange(config.lock_retry, absl::ZeroDuration(), day, false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<RegistryConfig> config = registry::conf::ParseRegistryYaml(text);
  if (!config.ok()) {
    if (config.status().message().empty()) __builtin_trap();  // errors always name the problem
    return 0;
  }
  if (!Valid(*config)) __builtin_trap();
  // The description must not print the token (it prints "<set>" instead).
  const std::string description = config->ToString();
  if (config->token.size() >= 16 && absl::StrContains(description, config->token)) {
    __builtin_trap();
  }
  return 0;
}
