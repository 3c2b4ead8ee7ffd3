// SPDX-License-Identifier: Apache-2.0
// plugin/abi_log.cc
//
// The 1.6 entry of the C table: set_log_sink, the host's sink for the plugin's log (base/log.h
// keeps the sink, its level, its delivery thread and the redaction).
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "plugin/abi_internal.h"

namespace registry::plugin::internal {

int SetLogSink(RegistryLogCallback sink, void* user_data, int32_t min_level,
               RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (min_level < REGISTRY_LOG_ERROR || min_level > REGISTRY_LOG_DEBUG) {
      return absl::InvalidArgumentError(
          absl::StrCat("set_log_sink: min_level ", min_level,
                       " is not a RegistryLogLevel (0 error, 1 warn, 2 info, 3 debug)"));
    }
    const auto level = static_cast<LogLevel>(min_level);
    if (sink == nullptr) {
      ::registry::SetLogSink(nullptr, level);
      return absl::OkStatus();
    }
    ::registry::SetLogSink(
        [sink, user_data](const LogRecord& record) {
          sink(static_cast<int32_t>(record.level), absl::ToUnixMillis(record.time),
               record.component.c_str(), record.message.c_str(), user_data);
        },
        level);
    return absl::OkStatus();
  });
}

}  // namespace registry::plugin::internal
