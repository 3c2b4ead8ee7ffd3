// SPDX-License-Identifier: Apache-2.0
// tools/ctl_commands.h
//
// The commands of registryctl, one function each, dispatched through one table. A command gets
// a connected repository (loaded through the plugin SPI), its positional arguments (already
// counted) and its options; it prints its result and returns the process exit code. Adding a
// command is one function plus one row in the table in ctl_commands.cc. `watch` lives in
// ctl_watch.cc, `lock` and `semaphore` in ctl_lock.cc, `stats` in ctl_stats.cc, `export` and
// `import` in ctl_backup.cc.
//
// Exit codes: 0 success; 1 a negative answer (key absent, key already claimed, lock or permit
// not acquired in time); 2 any error (bad argument, unreachable server, refused by the server);
// 3 the lock (or permit) was lost while `lock` (or `semaphore`) ran its command. `lock` and
// `semaphore` otherwise exit with their command's status.
//
// Thread safety: commands run on the main thread; connection notices and watch events arrive on
// plugin threads and are written in whole lines.
#ifndef REGISTRY_TOOLS_CTL_COMMANDS_H_
#define REGISTRY_TOOLS_CTL_COMMANDS_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "host/plugin_client.h"
#include "tools/signal_pipe.h"

namespace registry::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitError = 2;
inline constexpr int kExitLockLost = 3;
// `lock` when its command cannot be run, as a shell reports it.
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitCommandNotFound = 127;

// Which lock `lock` takes: chosen by --fair, --read or --write (one at most).
enum class LockKind { kPlain, kFair, kRead, kWrite };

// Options of individual commands (flags that only one command accepts).
struct CommandOptions {
  bool initial = false;                        // watch --initial
  bool json = false;                           // stats --json
  std::optional<absl::Duration> lock_timeout;  // lock, semaphore --timeout-ms
  LockKind lock_kind = LockKind::kPlain;       // lock --fair, --read, --write
  int semaphore_limit = 0;                     // semaphore --limit
  std::vector<std::string> command_line;       // lock, semaphore: CMD ARGS... (after "--")
  bool dry_run = false;                        // import --dry-run
};

struct CommandContext {
  plugin::PluginRepository* repository;
  std::FILE* out;       // results (stdout)
  std::FILE* err;       // diagnostics (stderr)
  SignalPipe* signals;  // non-null for commands that hold (Command::holds)
  CommandOptions options;
};

struct Command {
  const char* name;
  const char* arguments;  // for usage lines, e.g. "KEY VALUE"
  const char* summary;    // for --help
  int argument_count;     // exact number of positional arguments after the name
  bool holds;             // runs until SIGINT/SIGTERM: signals are captured before it starts
  int (*run)(const CommandContext& context, const std::vector<std::string>& arguments);
  bool runs_command_line = false;  // takes "-- CMD ARGS..." after its arguments
};

// Every command, in --help order.
const std::vector<Command>& Commands();

// The command called `name`, or nullptr.
const Command* FindCommand(absl::string_view name);

// Prints "registryctl: <what>: <message>" on one line (line breaks in the message become
// spaces) and returns kExitError.
int ReportError(std::FILE* err, absl::string_view what, const absl::Status& status);

// Prints the plugin's metrics (every repository's in this process) on `out`: Prometheus' text
// format, or with `json` one JSON object per sample. Returns kExitOk or the error it reported.
int PrintMetrics(const plugin::PluginLibrary& library, std::FILE* out, bool json, std::FILE* err);

// `stats [--json]`: lists the namespace root once (the store must answer), then PrintMetrics.
int RunStats(const CommandContext& context, const std::vector<std::string>& arguments);

// `watch KEY [--initial]`: one JSON object per event on `out` (event_json.h) until SIGINT or
// SIGTERM; "registryctl: watching KEY" on `err` once the watch is established. Exit 0.
int RunWatch(const CommandContext& context, const std::vector<std::string>& arguments);

// `lock NAME [--fair|--read|--write] [--timeout-ms N] -- CMD ARGS...`: runs CMD holding lock
// NAME (the fair lock, or the read or write side of the read/write lock NAME); see ctl_lock.cc.
int RunLock(const CommandContext& context, const std::vector<std::string>& arguments);

// `semaphore NAME --limit N [--timeout-ms N] -- CMD ARGS...`: as RunLock, holding a permit of
// the semaphore NAME of N permits.
int RunSemaphore(const CommandContext& context, const std::vector<std::string>& arguments);

// `export PREFIX`: the persistent keys of PREFIX's subtree on `out`, in `consul kv export`'s
// format (ctl_backup_file.h); see ctl_backup.cc.
int RunExport(const CommandContext& context, const std::vector<std::string>& arguments);

// `import FILE [--dry-run]`: writes the keys of FILE ("-": standard input), a file in `consul kv
// export`'s format, once every entry is checked; with --dry-run, only checks them.
int RunImport(const CommandContext& context, const std::vector<std::string>& arguments);

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_CTL_COMMANDS_H_
