// SPDX-License-Identifier: Apache-2.0
// consul-dev-server: runs DevServer until SIGINT/SIGTERM.
//
//   consul-dev-server --http-addr=127.0.0.1:0 --session-ttl-min=1s
//   -> consul-dev-server listening on 127.0.0.1:41234
//
// Exit status: 0 after a signal (or --help, --version), 2 for a bad flag (one line naming it),
// 1 if it cannot listen.
#include <gflags/gflags.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "devserver/dev_server.h"
#include "devserver/go_compat.h"

DEFINE_string(http_addr, "127.0.0.1:8500", "host:port to serve HTTP on; port 0 picks a free port");
DEFINE_string(session_ttl_min, "10s", "smallest session TTL accepted (Consul's session_ttl_min)");
DEFINE_string(default_query_time, "5m", "blocking query wait when none (or <= 0) is given");
DEFINE_string(max_query_time, "10m", "cap on a blocking query's wait");
DEFINE_string(node_name, "", "name of the single node (default: host name)");
DEFINE_string(datacenter, "dc1", "datacenter name; ?dc= naming another one fails");
DEFINE_string(acl_master_token, "",
              "if set, API requests must carry this token (else 403); visible in the process "
              "list: prefer --acl-master-token-file");
DEFINE_string(acl_master_token_file, "",
              "a file whose content (surrounding whitespace removed) is the master token");
DEFINE_string(read_timeout, "2m",
              "close a connection that has not sent a whole request this long after the server "
              "began waiting for one (idle time included)");
DEFINE_int32(http_max_conns_per_client, 200,
             "open connections one client address may hold (as Consul's "
             "limits.http_max_conns_per_client); more are closed at once; 0: no limit");
DEFINE_bool(enable_fault_injection, false, "serve the /v1/_dev/fault and session controls");

namespace {

namespace devserver = registry::devserver;

constexpr int kBadFlagExit = 2;

// The flags --help shows, grouped: its own only (not gflags' built-in ones).
struct FlagGroup {
  const char* title;
  std::vector<const char*> flags;  // gflags' names
};
const FlagGroup kFlagGroups[] = {
    {"Serving",
     {"http_addr", "node_name", "datacenter", "acl_master_token", "acl_master_token_file"}},
    {"Connections", {"read_timeout", "http_max_conns_per_client"}},
    {"Sessions and blocking queries", {"session_ttl_min", "default_query_time", "max_query_time"}},
    {"Testing", {"enable_fault_injection"}},
};

void PrintHelp() {
  std::printf(
      "Usage: consul-dev-server [FLAGS]\n"
      "\n"
      "A single-node, in-memory server speaking the parts of Consul's HTTP API the registry\n"
      "plugin uses (KV, sessions, txn, blocking queries, ACL tokens). It prints\n"
      "'consul-dev-server listening on HOST:PORT' once it serves, and runs until SIGINT or\n"
      "SIGTERM. Durations are Go durations (\"10s\", \"1m30s\").\n");
  for (const FlagGroup& group : kFlagGroups) {
    std::printf("\n%s:\n", group.title);
    for (const char* name : group.flags) {
      gflags::CommandLineFlagInfo info;
      if (!gflags::GetCommandLineFlagInfo(name, &info)) continue;
      std::string shown = absl::StrReplaceAll(name, {{"_", "-"}});
      if (info.type != "bool" && !info.default_value.empty()) {
        absl::StrAppend(&shown, " (default ", info.default_value, ")");
      }
      std::printf("  --%s\n      %s\n", shown.c_str(), info.description.c_str());
    }
  }
  std::printf(
      "\nOther:\n  --help\n      print this help\n  --version\n      print the version\n"
      "\nExit status: 0 after SIGINT/SIGTERM, 1 if it cannot listen, 2 for a bad flag.\n");
}

// Handles --help and --version (before any other flag is looked at); true if one was given.
bool HandleInfoFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpfull") {
      PrintHelp();
      return true;
    }
    if (arg == "--version" || arg == "-version") {
      std::printf("consul-dev-server %s\n", REGISTRY_VERSION);
      return true;
    }
  }
  return false;
}

[[noreturn]] void BadFlag(const std::string& message) {
  std::fprintf(stderr, "consul-dev-server: %s\n", message.c_str());
  std::exit(kBadFlagExit);
}

// gflags exits with 1 on a bad flag; validate every "--name[=value]" first so that bad
// values exit with 2 and a single line.
void PrecheckFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (!absl::StartsWith(arg, "-")) continue;
    arg = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    std::string name = arg;
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    const std::string flag = absl::StrReplaceAll(name, {{"-", "_"}});
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(flag.c_str(), &info)) {
      if (absl::StartsWith(flag, "no") && !has_value &&
          gflags::GetCommandLineFlagInfo(flag.substr(2).c_str(), &info) && info.type == "bool") {
        continue;
      }
      BadFlag("unknown flag --" + name);
    }
    if (info.type == "bool") {
      if (!has_value) continue;
      static const char* kBools[] = {"true", "false", "1", "0", "yes", "no", "t", "f", "y", "n"};
      bool ok = false;
      for (const char* b : kBools) ok = ok || absl::EqualsIgnoreCase(value, b);
      if (!ok) BadFlag("--" + name + ": '" + value + "' is not true or false");
      continue;
    }
    if (!has_value && i + 1 >= argc) BadFlag("--" + name + ": missing value");
    if (info.type == "int32") {
      if (!has_value) value = argv[++i];
      int number = 0;
      if (!absl::SimpleAtoi(value, &number) || number < 0) {
        BadFlag("--" + name + ": '" + value + "' is not a whole number from 0");
      }
    }
  }
}

absl::Duration DurationFlag(const char* name, const std::string& text) {
  absl::StatusOr<absl::Duration> parsed = devserver::ParseGoDuration(text);
  if (!parsed.ok()) {
    BadFlag(std::string("--") + name + ": '" + text + "' is not a duration (" +
            std::string(parsed.status().message()) + ")");
  }
  return *parsed;
}

// The master token: --acl-master-token, or the content of --acl-master-token-file (never both).
std::string MasterToken() {
  const std::string& path = FLAGS_acl_master_token_file;
  if (path.empty()) return FLAGS_acl_master_token;
  if (!FLAGS_acl_master_token.empty()) {
    BadFlag("--acl-master-token and --acl-master-token-file: give one of them");
  }
  std::ifstream file(path, std::ios::binary);
  std::ostringstream content;
  if (!file || !(content << file.rdbuf())) {
    BadFlag("--acl-master-token-file: cannot read '" + path + "'");
  }
  const std::string token(absl::StripAsciiWhitespace(content.str()));
  if (token.empty()) BadFlag("--acl-master-token-file: '" + path + "' is empty");
  for (const char c : token) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      BadFlag("--acl-master-token-file: '" + path +
              "' holds more than one line or a control "
              "character");  // never echoes the token
    }
  }
  return token;
}

// What a user must know before trusting the server with anything.
void PrintBanner(const devserver::ServerOptions& options) {
  std::fprintf(stderr,
               "consul-dev-server: for development and tests only: one node, data in memory "
               "(gone at exit), plain HTTP; %s\n",
               options.acl_master_token.empty()
                   ? "no ACLs: any client may read and write everything "
                     "(--acl-master-token-file requires a token)"
                   : "ACLs: every API request must carry the master token");
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage("consul-dev-server [--http-addr=127.0.0.1:8500] [--session-ttl-min=10s]");
  if (HandleInfoFlags(argc, argv)) return 0;
  PrecheckFlags(argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/true);
  if (argc > 1) BadFlag(std::string("unexpected argument '") + argv[1] + "'");

  devserver::ServerOptions options;
  options.http_addr = FLAGS_http_addr;
  options.session_ttl_min = DurationFlag("session-ttl-min", FLAGS_session_ttl_min);
  options.default_query_time = DurationFlag("default-query-time", FLAGS_default_query_time);
  options.max_query_time = DurationFlag("max-query-time", FLAGS_max_query_time);
  options.node_name = FLAGS_node_name;
  options.datacenter = FLAGS_datacenter;
  options.acl_master_token = MasterToken();
  options.enable_fault_injection = FLAGS_enable_fault_injection;
  options.read_timeout = DurationFlag("read-timeout", FLAGS_read_timeout);
  options.max_conns_per_client = FLAGS_http_max_conns_per_client;

  // Block the stop signals before any thread starts, so that only sigwait() sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<devserver::DevServer>> server =
      devserver::DevServer::Start(options);
  if (!server.ok()) {
    std::string message(server.status().message());
    if (server.status().code() == absl::StatusCode::kInvalidArgument) {
      // "session_ttl_min: ..." -> "--session-ttl-min: ..."
      const size_t colon = message.find(':');
      if (colon != std::string::npos) {
        message = "--" + absl::StrReplaceAll(message.substr(0, colon), {{"_", "-"}}) +
                  message.substr(colon);
      }
      BadFlag(message);
    }
    std::fprintf(stderr, "consul-dev-server: %s\n", message.c_str());
    return 1;
  }
  PrintBanner(options);
  std::printf("consul-dev-server listening on %s\n", (*server)->address().c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  (*server)->Stop();
  return 0;
}
