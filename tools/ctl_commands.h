// tools/ctl_commands.h
//
// The commands of registryctl, one function each, dispatched through one table. A command gets
// a connected repository (loaded through the plugin SPI) and its positional arguments, already
// counted; it prints its result and returns the process exit code. Adding a command (watch,
// lock, ...) is one function plus one row in the table in ctl_commands.cc.
//
// Exit codes: 0 success; 1 a negative answer (key absent, key already claimed); 2 any error
// (bad argument, unreachable server, refused by the server).
//
// Thread safety: commands run on the main thread; connection notices arrive on a plugin thread
// and are written to stderr in whole lines.
#ifndef REGISTRY_TOOLS_CTL_COMMANDS_H_
#define REGISTRY_TOOLS_CTL_COMMANDS_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "registry/repository.h"
#include "tools/signal_pipe.h"

namespace registry::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitError = 2;

struct CommandContext {
  Repository* repository;
  std::FILE* out;       // results (stdout)
  std::FILE* err;       // diagnostics (stderr)
  SignalPipe* signals;  // non-null for commands that hold (Command::holds)
};

struct Command {
  const char* name;
  const char* arguments;  // for usage lines, e.g. "KEY VALUE"
  const char* summary;    // one line for --help
  int argument_count;     // exact number of positional arguments after the name
  bool holds;             // runs until SIGINT/SIGTERM: signals are captured before it starts
  int (*run)(const CommandContext& context, const std::vector<std::string>& arguments);
};

// Every command, in --help order.
const std::vector<Command>& Commands();

// The command called `name`, or nullptr.
const Command* FindCommand(absl::string_view name);

// Prints "registryctl: <what>: <message>" on one line (line breaks in the message become
// spaces) and returns kExitError.
int ReportError(std::FILE* err, absl::string_view what, const absl::Status& status);

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_CTL_COMMANDS_H_
