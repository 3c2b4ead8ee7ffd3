// SPDX-License-Identifier: Apache-2.0
// base/log.h
//
// The plugin's one log. Every component writes through it:
//
//   Log(LogLevel::kWarn, "session", "renewing the instance session failed: ", status.ToString());
//
// A record carries a level, a wall-clock timestamp, the component ("session", "watch", "lock",
// "repository", "listener") and a message. Levels, most severe first: error (something failed
// that the plugin cannot repair by itself), warn (a failure it is repairing: a lost session, a
// watch re-listing), info (state changes: a session created, a watch recovered), debug. Nothing
// is logged per request at info or above.
//
// Where records go:
//  - By default to stderr, one line each ("2026-11-25T11:45:01.123Z W session: ..."), at warn and
//    above; SetStderrLogLevel() changes that level (the registry YAML's `logLevel`).
//  - Once a host installs a sink with SetLogSink(), to that sink only, at the sink's own minimum
//    level. The sink is called on one delivery thread of the log, never on a thread of the
//    plugin that renews sessions or does network I/O, one record at a time, in the order the
//    records were made. Records wait in a bounded queue (kLogQueueCapacity); when a slow sink
//    lets it fill, newer records are dropped and a warn record says how many.
//
// Secrets never reach a sink: every registered secret (RegisterLogSecret, e.g. an ACL token) is
// replaced by "<redacted>" in the component and the message before a record leaves Log().
//
// Thread safety: every function may be called from any thread. The level check is one atomic
// load, so a record below the level costs no formatting (the message is built after the check).
#ifndef BASE_LOG_H_
#define BASE_LOG_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// "error", "warn", "info", "debug".
absl::string_view LogLevelName(LogLevel level);
// The level named `name` (any case; "warning" too), or nullopt.
std::optional<LogLevel> ParseLogLevel(absl::string_view name);

struct LogRecord {
  LogLevel level;
  absl::Time time;
  std::string component;
  std::string message;
};

using LogSink = std::function<void(const LogRecord&)>;

// Records a sink may fall behind by before newer ones are dropped.
inline constexpr size_t kLogQueueCapacity = 4096;

// True when a record at `level` would go anywhere.
bool LogEnabled(LogLevel level);

// Logs `message` as it is, if `level` is enabled.
void LogMessage(LogLevel level, absl::string_view component, std::string message);

// Logs the concatenation of `parts` (absl::StrCat's arguments) if `level` is enabled.
template <typename... Parts>
void Log(LogLevel level, absl::string_view component, const Parts&... parts) {
  if (!LogEnabled(level)) return;
  LogMessage(level, component, absl::StrCat(parts...));
}

// Sends every later record at `min_level` or above to `sink` instead of stderr. An empty sink
// goes back to stderr. When a sink is replaced, this returns after the old sink's last call, so
// the host may free what it used, except when called from inside the sink itself (then the old
// sink may still be running the current call, and is never called again).
void SetLogSink(LogSink sink, LogLevel min_level);

// The level of the default stderr output (warn until changed). No effect on a host sink's level.
void SetStderrLogLevel(LogLevel level);

// Registers `secret` for redaction until the same number of UnregisterLogSecret calls. Empty
// secrets are ignored.
void RegisterLogSecret(const std::string& secret);
void UnregisterLogSecret(const std::string& secret);

// Formats `record` as the stderr line (without the newline).
std::string FormatLogLine(const LogRecord& record);

}  // namespace registry

#endif  // BASE_LOG_H_
