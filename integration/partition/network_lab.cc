// SPDX-License-Identifier: Apache-2.0
// integration/partition/network_lab.cc
#include "integration/partition/network_lab.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "integration/testing/consul_agent.h"

namespace registry::partition {
namespace {

using integration::RunProcess;
using integration::RunResult;

constexpr char kPrefix[] = "rcp";
constexpr char kTable[] = "rcp_lab";
constexpr absl::Duration kCommandTimeout = absl::Seconds(10);
// How long the destructor waits for killed processes to leave a namespace.
constexpr absl::Duration kDrainTimeout = absl::Seconds(10);
constexpr absl::Duration kDrainPoll = absl::Milliseconds(20);
constexpr int kMaxStaleNamespaces = 256;  // bound of the stale-namespace sweep

// The first executable of `candidates`, or "".
std::string FindTool(std::initializer_list<const char*> candidates) {
  for (const char* path : candidates) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

const std::string& IpTool() {
  static const std::string path = FindTool({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
  return path;
}

const std::string& NftTool() {
  static const std::string path =
      FindTool({"/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", "/bin/nft"});
  return path;
}

absl::Status RunTool(const std::vector<std::string>& argv) {
  const RunResult run = RunProcess(argv, kCommandTimeout);
  if (run.exit_code == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), " failed (exit ", run.exit_code,
                                          "): ", absl::StripAsciiWhitespace(run.err)));
}

// Every namespace name `ip netns list` shows ("NAME (id: N)" lines).
std::vector<std::string> ListNamespaces() {
  const RunResult run = RunProcess({IpTool(), "netns", "list"}, kCommandTimeout);
  std::vector<std::string> names;
  for (absl::string_view line : absl::StrSplit(run.out, '\n', absl::SkipWhitespace())) {
    names.emplace_back(line.substr(0, line.find(' ')));
  }
  return names;
}

// The pids of the processes in namespace `netns`.
std::vector<pid_t> NamespacePids(const std::string& netns) {
  const RunResult run = RunProcess({IpTool(), "netns", "pids", netns}, kCommandTimeout);
  std::vector<pid_t> pids;
  for (absl::string_view word : absl::StrSplit(run.out, '\n', absl::SkipWhitespace())) {
    int pid = 0;
    if (absl::SimpleAtoi(word, &pid) && pid > 1 && pid != getpid()) pids.push_back(pid);
  }
  return pids;
}

// Kills every process in `netns` and waits (bounded) until none is left; then deletes it.
void KillAndDelete(const std::string& netns) {
  const absl::Time deadline = absl::Now() + kDrainTimeout;
  for (std::vector<pid_t> pids = NamespacePids(netns); !pids.empty() && absl::Now() < deadline;
       pids = NamespacePids(netns)) {
    for (pid_t pid : pids) kill(pid, SIGKILL);
    absl::SleepFor(kDrainPoll);  // polling the kernel's list, bounded by the deadline
  }
  RunProcess({IpTool(), "netns", "delete", netns}, kCommandTimeout);
}

// The pid in a lab namespace's name ("rcp<pid>-..."), or 0 if the name is not one.
pid_t LabPid(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, kPrefix)) return 0;
  const size_t dash = name.find('-');
  int pid = 0;
  if (dash == absl::string_view::npos || !absl::SimpleAtoi(name.substr(0, dash), &pid)) return 0;
  return pid;
}

// Removes the lab namespaces whose process is dead, or is this one (a reused pid).
void RemoveStaleNamespaces() {
  int removed = 0;
  for (const std::string& name : ListNamespaces()) {
    const pid_t pid = LabPid(name);
    if (pid <= 0 || removed >= kMaxStaleNamespaces) continue;
    const bool dead = kill(pid, 0) != 0 && errno == ESRCH;
    if (!dead && pid != getpid()) continue;
    KillAndDelete(name);
    ++removed;
  }
}

std::string Rules(const std::vector<std::string>& rules) {
  std::string text;
  for (const std::string& rule : rules) absl::StrAppend(&text, "\t\t", rule, "\n");
  return text;
}

}  // namespace

std::string NetworkLab::Unsupported() {
  if (geteuid() != 0) return "network namespaces need root (run the partition tests as root)";
  if (IpTool().empty()) return "no `ip` command (apt-get install iproute2)";
  if (NftTool().empty()) return "no `nft` command (apt-get install nftables)";
  const std::string probe = absl::StrCat(kPrefix, getpid(), "-probe");
  if (absl::Status added = RunTool({IpTool(), "netns", "add", probe}); !added.ok()) {
    return absl::StrCat("cannot create a network namespace: ", added.message());
  }
  absl::Status nft = RunTool({IpTool(), "netns", "exec", probe, NftTool(), "list", "ruleset"});
  RunProcess({IpTool(), "netns", "delete", probe}, kCommandTimeout);
  if (!nft.ok()) return absl::StrCat("nftables does not work in a namespace: ", nft.message());
  return "";
}

absl::StatusOr<std::unique_ptr<NetworkLab>> NetworkLab::Create(
    const std::vector<std::string>& nodes) {
  if (std::string why = Unsupported(); !why.empty()) return absl::FailedPreconditionError(why);
  for (const std::string& name : nodes) {
    if (name.empty() || name.size() > 8 || !absl::c_all_of(name, absl::ascii_isalnum)) {
      return absl::InvalidArgumentError(absl::StrCat("bad lab node name '", name, "'"));
    }
  }
  if (nodes.empty() || nodes.size() > 200) {
    return absl::InvalidArgumentError("a lab has 1 to 200 nodes");
  }
  RemoveStaleNamespaces();
  absl::StatusOr<std::string> dir = integration::MakeTempDir();
  if (!dir.ok()) return dir.status();
  const pid_t pid = getpid();
  std::unique_ptr<NetworkLab> lab(
      new NetworkLab(absl::StrCat(kPrefix, pid), absl::StrCat("10.199.", 20 + pid % 200), *dir));
  if (absl::Status built = lab->Build(nodes); !built.ok()) return built;  // ~NetworkLab undoes
  return lab;
}

absl::Status NetworkLab::Build(const std::vector<std::string>& names) {
  hub_ = prefix_ + "-hub";
  RETURN_IF_ERROR(Ip({"netns", "add", hub_}));
  made_.push_back(hub_);
  RETURN_IF_ERROR(Ip({"-n", hub_, "link", "set", "lo", "up"}));
  RETURN_IF_ERROR(Ip({"-n", hub_, "link", "add", "br0", "type", "bridge"}));
  RETURN_IF_ERROR(Ip({"-n", hub_, "link", "set", "br0", "up"}));
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    Node node;
    node.name = names[i];
    node.netns = absl::StrCat(prefix_, "-", names[i]);
    node.address = absl::StrCat(subnet_, ".", 10 + i);
    const std::string port = absl::StrCat("p", i);
    RETURN_IF_ERROR(Ip({"netns", "add", node.netns}));
    made_.push_back(node.netns);
    RETURN_IF_ERROR(Ip({"-n", node.netns, "link", "set", "lo", "up"}));
    RETURN_IF_ERROR(Ip({"-n", hub_, "link", "add", port, "type", "veth", "peer", "name", "eth0",
                        "netns", node.netns}));
    RETURN_IF_ERROR(Ip({"-n", hub_, "link", "set", port, "master", "br0"}));
    RETURN_IF_ERROR(Ip({"-n", hub_, "link", "set", port, "up"}));
    RETURN_IF_ERROR(
        Ip({"-n", node.netns, "addr", "add", absl::StrCat(node.address, "/24"), "dev", "eth0"}));
    RETURN_IF_ERROR(Ip({"-n", node.netns, "link", "set", "eth0", "up"}));
    nodes_.push_back(std::move(node));
  }
  return absl::OkStatus();
}

NetworkLab::~NetworkLab() {
  // Nodes first (their processes, then the namespace, which takes the veth pair with it), the
  // hub last.
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) KillAndDelete(*it);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

int NetworkLab::index(absl::string_view name) const {
  for (int i = 0; i < size(); ++i) {
    if (nodes_[i].name == name) return i;
  }
  return -1;
}

std::vector<std::string> NetworkLab::InNode(int node, const std::vector<std::string>& argv) const {
  std::vector<std::string> full = {IpTool(), "netns", "exec", netns(node)};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

absl::StatusOr<std::unique_ptr<integration::Subprocess>> NetworkLab::Spawn(
    int node, const std::vector<std::string>& argv) const {
  return integration::Subprocess::Start(InNode(node, argv));
}

absl::Status NetworkLab::Ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {IpTool()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunTool(argv);
}

absl::Status NetworkLab::ApplyRules(int node) {
  const Node& n = nodes_[node];
  // Creating the table first makes the delete valid when it did not exist: one transaction
  // replaces whatever was there.
  std::string script = absl::StrCat("table inet ", kTable, "\ndelete table inet ", kTable, "\n");
  if (!n.input_rules.empty() || !n.output_rules.empty()) {
    absl::StrAppend(&script, "table inet ", kTable,
                    " {\n\tchain input {\n\t\ttype filter hook input priority 0; policy accept;\n",
                    Rules(n.input_rules),
                    "\t}\n\tchain output {\n\t\ttype filter hook output priority 0; policy "
                    "accept;\n",
                    Rules(n.output_rules), "\t}\n}\n");
  }
  const std::string file = absl::StrCat(dir_, "/", n.name, ".nft");
  std::ofstream(file, std::ios::trunc) << script;
  return RunTool(InNode(node, {NftTool(), "-f", file}));
}

absl::Status NetworkLab::Isolate(int node) {
  nodes_[node].input_rules.push_back("iifname \"lo\" accept");
  nodes_[node].input_rules.push_back("drop");
  nodes_[node].output_rules.push_back("oifname \"lo\" accept");
  nodes_[node].output_rules.push_back("drop");
  return ApplyRules(node);
}

absl::Status NetworkLab::Partition(const std::vector<int>& a, const std::vector<int>& b) {
  auto addresses = [this](const std::vector<int>& group) {
    std::vector<std::string> out;
    for (int node : group) out.push_back(address(node));
    return absl::StrCat("{ ", absl::StrJoin(out, ", "), " }");
  };
  const std::string a_set = addresses(a);
  const std::string b_set = addresses(b);
  for (const auto& [group, peers] : {std::pair{&a, &b_set}, std::pair{&b, &a_set}}) {
    for (int node : *group) {
      nodes_[node].input_rules.push_back(absl::StrCat("ip saddr ", *peers, " drop"));
      nodes_[node].output_rules.push_back(absl::StrCat("ip daddr ", *peers, " drop"));
      RETURN_IF_ERROR(ApplyRules(node));
    }
  }
  return absl::OkStatus();
}

absl::Status NetworkLab::Loss(int node, int percent) {
  if (percent < 0 || percent > 100) return absl::InvalidArgumentError("loss is 0 to 100 %");
  if (percent == 0) return absl::OkStatus();
  // numgen's range is 0-99: nft refuses "< 100".
  const std::string draw =
      percent == 100 ? "" : absl::StrCat("numgen random mod 100 < ", percent, " ");
  nodes_[node].input_rules.push_back(absl::StrCat("iifname != \"lo\" ", draw, "drop"));
  nodes_[node].output_rules.push_back(absl::StrCat("oifname != \"lo\" ", draw, "drop"));
  return ApplyRules(node);
}

absl::Status NetworkLab::PortDown(int node) {
  nodes_[node].port_down = true;
  return Ip({"-n", hub_, "link", "set", absl::StrCat("p", node), "down"});
}

absl::Status NetworkLab::HealAll() {
  absl::Status status;
  for (int i = 0; i < size(); ++i) {
    Node& node = nodes_[i];
    if (!node.input_rules.empty() || !node.output_rules.empty()) {
      node.input_rules.clear();
      node.output_rules.clear();
      status.Update(ApplyRules(i));
    }
    if (node.port_down) {
      node.port_down = false;
      status.Update(Ip({"-n", hub_, "link", "set", absl::StrCat("p", i), "up"}));
    }
  }
  return status;
}

std::string NetworkLab::ListRules(int node) const {
  const RunResult run = RunProcess(InNode(node, {NftTool(), "list", "ruleset"}), kCommandTimeout);
  return run.out;
}

absl::StatusOr<std::unique_ptr<NamespaceThread>> NamespaceThread::Start(
    const std::string& netns_path) {
  const int fd = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("open ", netns_path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<NamespaceThread> thread(new NamespaceThread());
  NamespaceThread* self = thread.get();
  thread->thread_ = std::thread([self, fd] { self->Loop(fd); });
  absl::MutexLock lock(&thread->mu_);
  thread->mu_.Await(absl::Condition(&thread->started_));
  if (!thread->start_error_.empty()) {
    return absl::InternalError(absl::StrCat("setns ", netns_path, ": ", thread->start_error_));
  }
  return thread;
}

NamespaceThread::~NamespaceThread() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void NamespaceThread::Loop(int netns_fd) {
  const bool joined = setns(netns_fd, CLONE_NEWNET) == 0;
  const int error = errno;
  close(netns_fd);
  absl::MutexLock lock(&mu_);
  started_ = true;
  if (!joined) {
    start_error_ = std::strerror(error);
    return;
  }
  for (;;) {
    mu_.Await(absl::Condition(
        +[](NamespaceThread* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->mu_) {
          return t->stop_ || (t->busy_ && t->task_ != nullptr);
        },
        this));
    if (!busy_) return;  // stopping, nothing queued
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    mu_.Unlock();
    task();
    mu_.Lock();
    busy_ = false;
  }
}

void NamespaceThread::Run(absl::FunctionRef<void()> task) {
  absl::MutexLock one_caller(&callers_);
  absl::MutexLock lock(&mu_);
  if (stop_ || !start_error_.empty()) return;
  task_ = [&task] { task(); };
  busy_ = true;
  mu_.Await(absl::Condition(
      +[](bool* busy) { return !*busy; }, &busy_));
}

}  // namespace registry::partition
