// SPDX-License-Identifier: Apache-2.0
// tools/registryctl.cc
//
// registryctl: a command-line host of the registry plugin. The repository comes only through
// the plugin SPI (host/loader.h + host/plugin_client.h); conf/ is used only to learn which
// `type:` a --config file asks for and which props it leaves to Consul's environment variables
// (tools/ctl_env.h). See --help.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "conf/registry_config.h"
#include "gflags/gflags.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "tools/ctl_commands.h"
#include "tools/ctl_env.h"
#include "tools/descriptors.h"
#include "tools/signal_pipe.h"

DEFINE_string(config, "",
              "registry YAML file (a `mode:` or `repository:` block); its `type:` selects the "
              "plugin. Must be complete on its own: the flags below replace its values");
DEFINE_string(servers, "127.0.0.1:8500",
              "comma-separated HOST:PORT list, each optionally http:// or https:// (props "
              "`server-lists`); overrides --config and CONSUL_HTTP_ADDR");
DEFINE_string(namespace, "registry",
              "namespace every key lives under (props `namespace`); overrides --config");
DEFINE_string(token, "",
              "ACL token (props `token`); overrides --config and the environment. Every user of "
              "the host can read a command line: prefer --token-file or CONSUL_HTTP_TOKEN_FILE");
DEFINE_string(token_file, "",
              "file holding the ACL token, surrounding whitespace trimmed (props `tokenFile`); "
              "overrides --config and the environment; not with --token");
DEFINE_string(plugin_dir, "",
              "directory searched for the plugin before <registryctl dir>/../lib and "
              "$REGISTRY_PLUGIN_PATH");
DEFINE_bool(initial, false, "watch only: report the keys that exist now as ADDED events first");
DEFINE_bool(fair, false,
            "lock only: take the fair lock NAME, which goes to waiting processes in the order they "
            "asked for it (a different lock from the plain lock NAME)");
DEFINE_bool(read, false,
            "lock only: take the read side of the read/write lock NAME, which any number of "
            "processes hold at once while no process holds its write side (a different lock from "
            "the plain lock NAME)");
DEFINE_bool(write, false,
            "lock only: take the write side of the read/write lock NAME, which one process holds "
            "while no process holds its read side; a waiting writer holds back the readers that "
            "come after it");
// A string: gflags would refuse a bad number itself, with exit 1 where usage errors exit 2.
DEFINE_string(timeout_ms, "",
              "lock and semaphore only: give up (exit 1) if the lock (or a permit) is not acquired "
              "within this many ms, 0 to 86400000; 0 makes a single attempt. Default: wait");
DEFINE_bool(dry_run, false,
            "import only: check every entry of FILE as the import would, print how many keys it "
            "would write, and write nothing");
DEFINE_bool(json, false,
            "stats only: print one JSON object per sample ({\"name\", \"type\", \"labels\", "
            "\"value\"}) instead of Prometheus' text format");
DEFINE_bool(stats, false,
            "when the command ends (before the repository closes), print the plugin's metrics in "
            "Prometheus' text format on stderr");
// A string, so that a value that is not a number is our usage error (exit 2), not gflags' exit.
DEFINE_string(limit, "",
              "semaphore only, and required there: how many processes may hold the semaphore at "
              "once, 1 to 1024; every process using it must give the same");

namespace registry::tools {
namespace {
constexpr char kDefaultType[] = "Consul";
constexpr int64_t kMaxTimeoutMs = 24 * 60 * 60 * 1000;  // --timeout-ms: 24 h

struct FlagSpec {
  const char* name;           // as typed: --plugin-dir
  const char* variable;       // as gflags knows it: plugin_dir
  const char* prop;           // the props key it overrides, or nullptr
  bool default_is_prop;       // without --config, the default value is used as the prop
  bool is_bool = false;       // takes no separate value (--initial, --initial=false)
  const char* commands = "";  // the only commands accepting it ("lock semaphore"); "": every one
  bool required = false;      // those commands need it
};
constexpr FlagSpec kFlags[] = {
    {"config", "config", nullptr, false},
    {"servers", "servers", "server-lists", true},
    {"namespace", "namespace", "namespace", true},
    {"token", "token", "token", false},
    {"token-file", "token_file", "tokenFile", false},
    {"plugin-dir", "plugin_dir", nullptr, false},
    {"initial", "initial", nullptr, false, /*is_bool=*/true, "watch"},
    {"timeout-ms", "timeout_ms", nullptr, false, /*is_bool=*/false, "lock semaphore"},
    {"fair", "fair", nullptr, false, /*is_bool=*/true, "lock"},
    {"read", "read", nullptr, false, /*is_bool=*/true, "lock"},
    {"write", "write", nullptr, false, /*is_bool=*/true, "lock"},
    {"limit", "limit", nullptr, false, /*is_bool=*/false, "semaphore", /*required=*/true},
    {"json", "json", nullptr, false, /*is_bool=*/true, "stats"},
    {"stats", "stats", nullptr, false, /*is_bool=*/true},
    {"dry-run", "dry_run", nullptr, false, /*is_bool=*/true, "import"},
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "registryctl: %s (see registryctl --help)\n", message.c_str());
  return kExitError;
}

// Word-wraps `text` to the help width, each line starting with `indent`.
std::string Wrapped(absl::string_view text, absl::string_view indent) {
  constexpr size_t kWidth = 92;
  std::string out;
  std::string line(indent);
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line.size() > indent.size() && line.size() + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, line, "\n");
      line = std::string(indent);
    }
    absl::StrAppend(&line, line.size() > indent.size() ? " " : "", word);
  }
  absl::StrAppend(&out, line, "\n");
  return out;
}

void PrintHelp() {
  std::printf(
      "Usage: registryctl [FLAGS] COMMAND ARGS...\n"
      "\n"
      "Talks to the cluster-mode registry through the registry plugin (loaded for the\n"
      "repository type, `Consul` unless --config names another). Keys are absolute paths\n"
      "such as /metadata/sharding_db, relative to the namespace; a VALUE of - is read from stdin.\n"
      "\nCommands:\n");
  for (const Command& command : Commands()) {
    const std::string head = absl::StrCat(command.name, " ", command.arguments);
    // The summary starts in column 24; its continuation lines are indented to match. A longer
    // head gets a line of its own.
    const std::string summary = Wrapped(command.summary, std::string(24, ' '));
    if (head.size() > 21) {
      std::printf("  %s\n%s", head.c_str(), summary.c_str());
    } else {
      std::printf("  %-21s %s", head.c_str(), summary.substr(24).c_str());
    }
  }
  std::printf("\nFlags (--flag=value or --flag value; '--' ends the flags):\n");
  for (const FlagSpec& flag : kFlags) {
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(flag.variable, &info)) continue;
    std::string head = absl::StrCat("--", flag.name);
    if (!info.default_value.empty() && !flag.is_bool) {
      absl::StrAppend(&head, " (default ", info.default_value, ")");
    }
    std::printf("  %s\n%s", head.c_str(), Wrapped(info.description, "      ").c_str());
  }
  std::printf(
      "  --help\n      print this help\n"
      "  --version\n      print the version\n"
      "%s"
      "\nExit status: 0 success; 1 negative answer (get/update/exists on an absent key, claim\n"
      "of a key already held, lock or permit not acquired within --timeout-ms); 2 error (bad\n"
      "usage, unreachable server, refused request, a semaphore's --limit other than its\n"
      "holders'); 3 the lock was lost while `lock` ran CMD, or the permit while `semaphore` did\n"
      "(CMD got SIGTERM). Otherwise `lock` and `semaphore` exit with CMD's status (128+N if CMD\n"
      "was killed by signal N, 126 if CMD could not be run, 127 if it was not found, 128+N if\n"
      "signal N interrupted the wait). ephemeral, claim and watch exit 0 after SIGINT/SIGTERM,\n"
      "once their keys are removed or the watch stopped.\n",
      EnvironmentHelp());
}

const FlagSpec* FindFlag(absl::string_view name) {
  for (const FlagSpec& flag : kFlags) {
    if (name == flag.name || name == flag.variable) return &flag;
  }
  return nullptr;
}

// What --help and --version ask for instead of a command.
enum class InfoRequest { kNone, kHelp, kVersion };

// Checks every flag before gflags sees them, so a bad flag is a usage error (exit 2) naming it
// rather than gflags' own exit.
int CheckFlags(int argc, char** argv, InfoRequest* info) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    absl::string_view name = arg.substr(arg[1] == '-' ? 2 : 1);
    const bool has_value = absl::StrContains(name, '=');
    name = name.substr(0, name.find('='));
    if (name == "help" || name == "h" || name == "helpfull") {
      *info = InfoRequest::kHelp;
      continue;
    }
    if (name == "version") {
      if (*info == InfoRequest::kNone) *info = InfoRequest::kVersion;
      continue;
    }
    const FlagSpec* flag = FindFlag(name);
    if (flag == nullptr) return UsageError(absl::StrCat("unknown flag '", arg, "'"));
    if (!has_value && !flag->is_bool && ++i >= argc) {
      return UsageError(absl::StrCat("flag '", arg, "' needs a value"));
    }
  }
  return kExitOk;
}

// For a command that runs a command line (lock NAME -- CMD ARGS...), moves everything after the
// first "--" that follows the command's name into `tail` and returns the new argc, so that
// gflags never sees CMD's arguments. Other command lines are returned unchanged.
int SplitCommandLine(int argc, char** argv, std::vector<std::string>* tail) {
  int i = 1;
  for (bool flags_done = false; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!flags_done && arg == "--") {
      flags_done = true;
      continue;
    }
    if (flags_done || arg.size() < 2 || arg[0] != '-') break;  // the command's name
    absl::string_view name = arg.substr(arg[1] == '-' ? 2 : 1);
    const FlagSpec* flag = FindFlag(name.substr(0, name.find('=')));
    if (flag != nullptr && !flag->is_bool && !absl::StrContains(name, '=')) ++i;  // its value
  }
  if (i >= argc) return argc;
  const Command* command = FindCommand(argv[i]);
  if (command == nullptr || !command->runs_command_line) return argc;
  for (int j = i + 1; j < argc; ++j) {
    if (absl::string_view(argv[j]) == "--") {
      tail->assign(argv + j + 1, argv + argc);
      return j;
    }
  }
  return argc;
}

bool FlagIsSet(const char* variable) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(variable, &info) && !info.is_default;
}

std::string FlagValue(const char* variable) {
  std::string value;
  gflags::GetCommandLineOption(variable, &value);
  return value;
}

// Refuses a flag given to a command that does not accept it, and a missing required one.
std::optional<int> CheckCommandFlags(const Command& command) {
  for (const FlagSpec& flag : kFlags) {
    if (*flag.commands == '\0') continue;
    const std::vector<absl::string_view> commands = absl::StrSplit(flag.commands, ' ');
    const bool accepted = absl::c_linear_search(commands, command.name);
    if (!accepted && FlagIsSet(flag.variable)) {
      return UsageError(absl::StrCat("flag '--", flag.name, "' is only for '",
                                     absl::StrJoin(commands, "' or '"), "'"));
    }
    if (accepted && flag.required && !FlagIsSet(flag.variable)) {
      return UsageError(absl::StrCat("'", command.name, "' needs flag '--", flag.name, "'"));
    }
  }
  return std::nullopt;
}

// The lock --fair, --read or --write chose into `*kind`; more than one is a usage error naming
// them (returns its exit code), since `lock` takes one lock.
std::optional<int> ReadLockKind(LockKind* kind) {
  std::vector<std::string> given;
  for (const auto& [on, flag, chosen] : {std::tuple(FLAGS_fair, "--fair", LockKind::kFair),
                                         std::tuple(FLAGS_read, "--read", LockKind::kRead),
                                         std::tuple(FLAGS_write, "--write", LockKind::kWrite)}) {
    if (!on) continue;
    given.push_back(absl::StrCat("'", flag, "'"));
    *kind = chosen;
  }
  if (given.size() < 2) return std::nullopt;
  const std::string last = given.back();
  given.pop_back();
  return UsageError(absl::StrCat("flags ", absl::StrJoin(given, ", "), " and ", last,
                                 " cannot be combined: 'lock' takes one lock"));
}

// The values of the command flags (already checked to belong to the command) into `*options`.
// Returns nullopt, or the exit code of a usage error.
std::optional<int> ReadCommandOptions(CommandOptions* options) {
  options->initial = FLAGS_initial;
  options->json = FLAGS_json;
  options->dry_run = FLAGS_dry_run;
  if (std::optional<int> rc = ReadLockKind(&options->lock_kind); rc.has_value()) return rc;
  if (FlagIsSet("timeout_ms")) {
    int64_t ms = -1;
    if (!absl::SimpleAtoi(FLAGS_timeout_ms, &ms) || ms < 0 || ms > kMaxTimeoutMs) {
      return UsageError(absl::StrCat("flag '--timeout-ms' must be a number from 0 to ",
                                     kMaxTimeoutMs, ", got '", FLAGS_timeout_ms, "'"));
    }
    options->lock_timeout = absl::Milliseconds(ms);
  }
  if (FlagIsSet("limit")) {
    int limit = 0;
    if (!absl::SimpleAtoi(FLAGS_limit, &limit) || limit < 1 ||
        limit > REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX) {
      return UsageError(absl::StrCat("flag '--limit' must be a number from 1 to ",
                                     REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX, ", got '", FLAGS_limit,
                                     "'"));
    }
    options->semaphore_limit = limit;
  }
  return std::nullopt;
}

// Parses the command line into `*command`, `*args` and `*options`. Returns nullopt to go on, or
// the exit code (help printed, or a usage error reported).
std::optional<int> ParseInvocation(int argc, char** argv, const Command** command,
                                   std::vector<std::string>* args, CommandOptions* options) {
  InfoRequest info = InfoRequest::kNone;
  argc = SplitCommandLine(argc, argv, &options->command_line);
  if (int rc = CheckFlags(argc, argv, &info); rc != kExitOk) return rc;
  if (info == InfoRequest::kHelp || (argc >= 2 && std::strcmp(argv[1], "help") == 0)) {
    PrintHelp();
    return kExitOk;
  }
  if (info == InfoRequest::kVersion) {
    std::printf("registryctl %s\n", REGISTRY_VERSION);
    return kExitOk;
  }
  gflags::ParseCommandLineNonHelpFlags(&argc, &argv, /*remove_flags=*/true);
  if (argc < 2) return UsageError("missing COMMAND");
  *command = FindCommand(argv[1]);
  if (*command == nullptr) return UsageError(absl::StrCat("unknown command '", argv[1], "'"));
  const Command& found = **command;
  args->assign(argv + 2, argv + argc);
  if (static_cast<int>(args->size()) != found.argument_count) {
    return UsageError(absl::StrCat("'", found.name, "' takes ", found.arguments, " (",
                                   found.argument_count, " argument",
                                   found.argument_count == 1 ? "" : "s", "), got ", args->size()));
  }
  if (found.runs_command_line && options->command_line.empty()) {
    return UsageError(
        absl::StrCat("'", found.name, "' takes ", found.arguments, ": CMD is missing after '--'"));
  }
  if (std::optional<int> rc = CheckCommandFlags(found); rc.has_value()) return rc;
  if (FlagIsSet("token") && FlagIsSet("token_file")) {
    return UsageError("flags '--token' and '--token-file' cannot be combined: give the token once");
  }
  return ReadCommandOptions(options);
}

// Loads the plugin of the configured repository type and creates the repository from --config
// and the flags into `*repository`. Returns kExitOk, or the exit code of the error it reported.
int OpenRepository(std::unique_ptr<plugin::PluginRepository>* repository) {
  std::string type = kDefaultType;
  const bool from_file = FlagIsSet("config");
  // Parsed again by the plugin; here its `type:` and what it leaves to the environment matter.
  std::optional<conf::RegistryConfig> file_config;
  if (from_file) {
    absl::StatusOr<conf::RegistryConfig> config = conf::LoadRegistryYamlFile(FLAGS_config);
    if (!config.ok()) return ReportError(stderr, "--config", config.status());
    type = config->repository_type;
    file_config = *std::move(config);
  }
  std::vector<std::string> search_path;
  if (!FLAGS_plugin_dir.empty()) search_path.push_back(FLAGS_plugin_dir);
  for (std::string& dir : plugin::DefaultPluginSearchPath()) search_path.push_back(std::move(dir));
  absl::StatusOr<std::shared_ptr<plugin::PluginLibrary>> library =
      plugin::LoadPluginForType(type, search_path);
  if (!library.ok()) return ReportError(stderr, "plugin", library.status());

  // Flags, then the file, then Consul's environment variables, then the defaults (ctl_env.h).
  PropSources sources;
  sources.getenv = [](const char* name) -> const char* { return std::getenv(name); };
  for (const FlagSpec& flag : kFlags) {
    if (flag.prop == nullptr) continue;
    if (FlagIsSet(flag.variable)) sources.flags.emplace_back(flag.prop, FlagValue(flag.variable));
    if (flag.default_is_prop) sources.defaults.emplace_back(flag.prop, FlagValue(flag.variable));
  }
  if (from_file && conf::IsConsulType(type)) {  // the environment is the Consul plugin's
    sources.file = &*file_config;
    absl::StatusOr<std::set<std::string>> keys = ConfigPropKeys(FLAGS_config);
    if (!keys.ok()) return ReportError(stderr, "--config", keys.status());
    sources.file_keys = *std::move(keys);
  }
  plugin::PropList props = sources.flags;
  if (!from_file || conf::IsConsulType(type)) {
    absl::StatusOr<plugin::PropList> resolved = ResolveProps(sources);
    if (!resolved.ok()) return UsageError(std::string(resolved.status().message()));
    props = *std::move(resolved);
  }
  absl::StatusOr<std::unique_ptr<plugin::PluginRepository>> created =
      from_file ? (*library)->CreateFromYamlFile(FLAGS_config, props)
                : (*library)->CreateFromProps(props);
  if (!created.ok()) return ReportError(stderr, "config", created.status());
  *repository = *std::move(created);
  return kExitOk;
}

// Closes `repository` after `command` ended with `rc`, and returns the exit code: a failed
// close fails a run that succeeded, except one whose CMD succeeded under a lock.
int CloseAfter(const Command& command, plugin::PluginRepository& repository, int rc) {
  // Close explicitly so a failure to remove ephemeral keys is visible; destroy would hide it.
  absl::Status closed = repository.Close();
  if (closed.ok() || rc != kExitOk) return rc;
  if (command.runs_command_line) {
    // CMD ran and succeeded under the lock; a session left behind (Consul unreachable at the
    // end) releases the lock when its TTL runs out, and must not make the run look failed.
    std::fprintf(stderr, "registryctl: warning: close: %s\n",
                 std::string(closed.message()).c_str());
    return rc;
  }
  return ReportError(stderr, "close", closed);
}

int Run(int argc, char** argv) {
  const Command* command = nullptr;
  std::vector<std::string> args;
  CommandOptions options;
  if (std::optional<int> rc = ParseInvocation(argc, argv, &command, &args, &options)) return *rc;
  // Signals are captured before connecting: one arriving mid-write still ends in a clean close.
  std::unique_ptr<SignalPipe> signals;
  if (command->holds) {
    absl::StatusOr<std::unique_ptr<SignalPipe>> installed = SignalPipe::Install();
    if (!installed.ok()) return ReportError(stderr, "signals", installed.status());
    signals = std::move(*installed);
  }
  std::unique_ptr<plugin::PluginRepository> repository;
  if (int rc = OpenRepository(&repository); rc != kExitOk) return rc;
  const CommandContext context{repository.get(), stdout, stderr, signals.get(), std::move(options)};
  int rc = command->run(context, args);
  if (FLAGS_stats) {
    const int printed = PrintMetrics(repository->library(), stderr, /*json=*/false, stderr);
    if (rc == kExitOk) rc = printed;
  }
  return CloseAfter(*command, *repository, rc);
}

}  // namespace
}  // namespace registry::tools

int main(int argc, char** argv) {
  registry::tools::RememberInheritedDescriptors();  // before anything opens one
  gflags::SetUsageMessage("registryctl [FLAGS] COMMAND ARGS... (see --help)");
  const int rc = registry::tools::Run(argc, argv);
  gflags::ShutDownCommandLineFlags();
  return rc;
}
