// SPDX-License-Identifier: Apache-2.0
// tools/ctl_commands.cc
#include "tools/ctl_commands.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/limits.h"
#include "base/status_text.h"
#include "tools/print_line.h"

namespace registry::tools {
namespace {

using Args = std::vector<std::string>;

// VALUE as given, or for "-" what standard input holds until its end (any bytes). Reading stops
// past limits::kMaxValueBytes, Consul's largest value: a larger one is refused (exit 2) before
// it fills memory. A value that is a single "-" is given on stdin too.
absl::StatusOr<std::string> ValueArgument(const std::string& argument) {
  if (argument != "-") return argument;
  std::string value;
  char buffer[64 * 1024];
  for (size_t read; (read = std::fread(buffer, 1, sizeof(buffer), stdin)) > 0;) {
    value.append(buffer, read);
    if (value.size() > limits::kMaxValueBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("the value on standard input is longer than ", limits::kMaxValueBytes,
                       " bytes, Consul's largest value (kv_max_value_size)"));
    }
  }
  if (std::ferror(stdin)) {
    return absl::UnavailableError(
        absl::StrCat("reading the value from standard input: ", std::strerror(errno)));
  }
  return value;
}

// What a hold command does once its key is written: says "ready", reports connection changes,
// waits for SIGINT/SIGTERM and closes the repository (its ephemeral keys vanish at once).
int HoldUntilSignalled(const CommandContext& context, absl::string_view key) {
  std::FILE* err = context.err;
  const int listener = context.repository->AddConnectionListener([err](ConnectionState state) {
    std::fprintf(err, "registryctl: connection %s\n", ConnectionStateName(state));
  });
  PrintLine(context.out, "ready");
  context.signals->Wait();
  context.repository->RemoveConnectionListener(listener);
  if (absl::Status closed = context.repository->Close(); !closed.ok()) {
    return ReportError(context.err, absl::StrCat("close after holding ", key), closed);
  }
  return kExitOk;
}

int RunGet(const CommandContext& context, const Args& args) {
  absl::StatusOr<std::optional<std::string>> value = context.repository->Get(args[0]);
  if (!value.ok()) return ReportError(context.err, absl::StrCat("get ", args[0]), value.status());
  if (!value->has_value()) {
    std::fprintf(context.err, "registryctl: get %s: key does not exist\n",
                 Abbreviated(args[0]).c_str());
    return kExitNegative;
  }
  PrintLine(context.out, **value);
  return kExitOk;
}

int RunPut(const CommandContext& context, const Args& args) {
  absl::StatusOr<std::string> value = ValueArgument(args[1]);
  if (!value.ok()) return ReportError(context.err, absl::StrCat("put ", args[0]), value.status());
  absl::Status status = context.repository->Persist(args[0], *value);
  return status.ok() ? kExitOk : ReportError(context.err, absl::StrCat("put ", args[0]), status);
}

int RunUpdate(const CommandContext& context, const Args& args) {
  absl::StatusOr<std::string> value = ValueArgument(args[1]);
  if (!value.ok())
    return ReportError(context.err, absl::StrCat("update ", args[0]), value.status());
  absl::Status status = context.repository->Update(args[0], *value);
  if (absl::IsNotFound(status)) {
    std::fprintf(context.err, "registryctl: update %s: key does not exist\n",
                 Abbreviated(args[0]).c_str());
    return kExitNegative;
  }
  return status.ok() ? kExitOk : ReportError(context.err, absl::StrCat("update ", args[0]), status);
}

int RunExists(const CommandContext& context, const Args& args) {
  absl::StatusOr<bool> exists = context.repository->IsExisted(args[0]);
  if (!exists.ok()) {
    return ReportError(context.err, absl::StrCat("exists ", args[0]), exists.status());
  }
  return *exists ? kExitOk : kExitNegative;
}

int RunLs(const CommandContext& context, const Args& args) {
  absl::StatusOr<std::vector<std::string>> children = context.repository->GetChildrenKeys(args[0]);
  if (!children.ok()) {
    return ReportError(context.err, absl::StrCat("ls ", args[0]), children.status());
  }
  for (const std::string& child : *children) {
    // A name another tool wrote with a control character (a terminal escape, a line break)
    // would print colours or a fake extra entry: it is named, escaped, on stderr instead, as
    // export and watch skip such keys.
    if (std::any_of(child.begin(), child.end(),
                    [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      PrintLine(context.err,
                absl::StrCat("registryctl: ls ", args[0], ": skipped the child '",
                             absl::CHexEscape(child), "': its name holds a control character"));
      continue;
    }
    PrintLine(context.out, child);
  }
  return kExitOk;
}

int RunRm(const CommandContext& context, const Args& args) {
  absl::Status status = context.repository->Delete(args[0]);
  return status.ok() ? kExitOk : ReportError(context.err, absl::StrCat("rm ", args[0]), status);
}

int RunEphemeral(const CommandContext& context, const Args& args) {
  absl::StatusOr<std::string> value = ValueArgument(args[1]);
  if (!value.ok()) {
    return ReportError(context.err, absl::StrCat("ephemeral ", args[0]), value.status());
  }
  absl::Status status = context.repository->PersistEphemeral(args[0], *value);
  if (!status.ok()) return ReportError(context.err, absl::StrCat("ephemeral ", args[0]), status);
  return HoldUntilSignalled(context, args[0]);
}

int RunClaim(const CommandContext& context, const Args& args) {
  absl::StatusOr<std::string> value = ValueArgument(args[1]);
  if (!value.ok()) return ReportError(context.err, absl::StrCat("claim ", args[0]), value.status());
  absl::StatusOr<bool> created = context.repository->PersistExclusiveEphemeral(args[0], *value);
  if (!created.ok()) {
    return ReportError(context.err, absl::StrCat("claim ", args[0]), created.status());
  }
  if (!*created) {
    std::fprintf(context.err, "registryctl: claim %s: already held by another instance\n",
                 Abbreviated(args[0]).c_str());
    return kExitNegative;
  }
  return HoldUntilSignalled(context, args[0]);
}

}  // namespace

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"get", "KEY", "print the value of KEY (exit 1 if absent)", 1, false, &RunGet},
      {"put", "KEY VALUE", "create or overwrite the persistent KEY", 2, false, &RunPut},
      {"update", "KEY VALUE", "overwrite KEY (exit 1 if absent; never creates it)", 2, false,
       &RunUpdate},
      {"exists", "KEY", "exit 0 if KEY holds a value, 1 if not", 1, false, &RunExists},
      {"ls", "KEY", "list the direct children of KEY, one name per line", 1, false, &RunLs},
      {"rm", "KEY", "delete KEY and everything below it", 1, false, &RunRm},
      {"ephemeral", "KEY VALUE",
       "set KEY bound to this process, print 'ready', hold until SIGINT/SIGTERM", 2, true,
       &RunEphemeral},
      {"claim", "KEY VALUE",
       "create KEY bound to this process unless it exists: print 'ready' and hold, or exit 1", 2,
       true, &RunClaim},
      {"watch", "KEY",
       "print every change of KEY and the keys below it as one JSON object per line, e.g. "
       "{\"type\":\"ADDED\",\"key\":\"/a/b\",\"value\":\"v\"} (type ADDED, UPDATED or "
       "DELETED; value null when unknown; a value that is not UTF-8 also comes as "
       "\"value_base64\"), until SIGINT/SIGTERM. Prints 'registryctl: watching KEY' on stderr once "
       "every later change will be reported. --initial: report the existing keys as ADDED first",
       1, true, &RunWatch},
      {"lock", "NAME -- CMD ARGS...",
       "run CMD (in its own process group) while holding the distributed lock NAME, then release "
       "it; exit with CMD's status (128+N if killed by signal N; 126/127 if it cannot be run). "
       "--timeout-ms N: exit 1 if the lock is not acquired within N ms (default: wait). "
       "--fair: the fair lock NAME instead, which waiting processes get in the order they asked "
       "for it. --read / --write: the read or the write side of the read/write lock NAME "
       "instead: any number of processes hold its read side at once, one its write side, and a "
       "waiting writer holds back later readers. --fair, --read and --write exclude each other. "
       "SIGINT/SIGTERM are forwarded to CMD. If the lock is lost while CMD runs, CMD gets "
       "SIGTERM (SIGKILL 5 s later) and registryctl exits 3",
       1, true, &RunLock, /*runs_command_line=*/true},
      {"semaphore", "NAME --limit N -- CMD ARGS...",
       "as lock, holding one of the N permits of the semaphore NAME instead, so that at most N "
       "processes run their commands at once. --limit N (required, 1 to 1024): every process "
       "must give the same N (another N while the semaphore has holders exits 2). Same "
       "--timeout-ms, exit codes and loss (exit 3) as lock",
       1, true, &RunSemaphore, /*runs_command_line=*/true},
      {"stats", "",
       "list the namespace root once (exit 2 if the store does not answer), then print the "
       "plugin's metrics in Prometheus' text format (--json: one JSON object per sample)",
       0, false, &RunStats},
      {"export", "PREFIX",
       "print the persistent keys of PREFIX and below it (/ for the whole namespace) as JSON in "
       "`consul kv export`'s format: [{\"key\", \"flags\", \"value\"}], each key its full "
       "Consul path (namespace included), each value in base64, so that `consul kv import` reads "
       "it too. Ephemeral keys are left out: they belong to live instances",
       1, false, &RunExport},
      {"import", "FILE",
       "write the keys of FILE (- for stdin), a `registryctl export` or `consul kv export` of "
       "this namespace, as persistent keys, in transactions of txnMaxOperations keys. Every "
       "entry is checked first: a bad, truncated or foreign file (a key outside the namespace, "
       "a folder key, flags other than 0) writes nothing and names the first bad entry. Keys "
       "not in FILE are never touched. --dry-run: check only",
       1, false, &RunImport},
  };
  return commands;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command& command : Commands()) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

int ReportError(std::FILE* err, absl::string_view what, const absl::Status& status) {
  const std::string message =
      absl::StrReplaceAll(status.message(), {{"\r\n", " "}, {"\n", " "}, {"\r", " "}});
  // `what` names the command and its argument, a key of any size: quoted Abbreviated.
  std::fprintf(err, "registryctl: %s: %s\n", Abbreviated(what).c_str(), message.c_str());
  return kExitError;
}

}  // namespace registry::tools
