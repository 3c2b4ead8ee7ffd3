// SPDX-License-Identifier: Apache-2.0
// integration/partition/lab_client_agents.cc
#include "integration/partition/lab_client_agents.h"

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "integration/testing/consul_agent.h"
#include "nlohmann/json.hpp"

namespace registry::partition {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(60);
constexpr absl::Duration kPoll = absl::Milliseconds(50);
constexpr absl::Duration kReapTimeout = absl::Seconds(10);

}  // namespace

absl::StatusOr<std::unique_ptr<LabClientAgents>> LabClientAgents::Start(
    const NetworkLab& lab, LabConsul& consul, const std::string& binary,
    const std::vector<int>& nodes) {
  absl::StatusOr<std::string> dir = integration::MakeTempDir();
  if (!dir.ok()) return dir.status();
  std::unique_ptr<LabClientAgents> agents(new LabClientAgents(lab, consul, binary, *dir));
  absl::Status status;
  for (int node : nodes) {
    if (status.ok()) status = agents->Launch(node);
  }
  // Sessions are created on the agent's node: the catalog must know it before the instances
  // start, which it does once the agent has joined and synced.
  const absl::Time deadline = absl::Now() + kStartTimeout;
  for (int node : nodes) {
    if (status.ok()) status = agents->AwaitAlive(node, deadline - absl::Now());
  }
  if (!status.ok()) {
    std::string tails;
    for (int node : nodes) {
      absl::StrAppend(&tails, "\n--- agent ", lab.name(node), ":\n", agents->LogTail(node, 15));
    }
    return absl::InternalError(
        absl::StrCat("consul client agents did not start in the lab: ", status.message(), tails));
  }
  return agents;
}

LabClientAgents::~LabClientAgents() {
  for (auto& [node, process] : processes_) {
    if (process == nullptr) continue;
    process->Signal(SIGKILL);
    process->Wait(absl::Now() + kReapTimeout);
  }
  processes_.clear();
  std::error_code ignored;
  if (!keep_files_) std::filesystem::remove_all(dir_, ignored);
}

absl::Status LabClientAgents::Launch(int node) {
  const std::string dir = absl::StrCat(dir_, "/", lab_.name(node));
  std::filesystem::create_directories(dir + "/data");
  const nlohmann::json config = {
      {"session_ttl_min", "1s"},
      {"disable_update_check", true},
      {"ports", {{"dns", -1}, {"grpc", -1}}},
  };
  std::ofstream(dir + "/config.json", std::ios::trunc) << config.dump(2) << "\n";
  // Through sh only to send the output to a file (appended: a restart keeps the first run's).
  std::vector<std::string> argv = {"/bin/sh",
                                   "-c",
                                   "log=$1; shift; exec \"$@\" >>\"$log\" 2>&1",
                                   "sh",
                                   dir + "/agent.log",
                                   binary_,
                                   "agent",
                                   absl::StrCat("-bind=", lab_.address(node)),
                                   "-client=127.0.0.1",
                                   absl::StrCat("-node=", lab_.name(node)),
                                   "-datacenter=dc1",
                                   absl::StrCat("-data-dir=", dir, "/data"),
                                   absl::StrCat("-config-file=", dir, "/config.json"),
                                   "-retry-interval=1s"};
  for (int i = 0; i < consul_.size(); ++i) {
    argv.push_back(absl::StrCat("-retry-join=", lab_.address(consul_.node(i))));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<integration::Subprocess> process, lab_.Spawn(node, argv));
  processes_[node] = std::move(process);
  return absl::OkStatus();
}

absl::Status LabClientAgents::Kill(int node) {
  auto it = processes_.find(node);
  if (it == processes_.end() || it->second == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no agent runs on ", lab_.name(node)));
  }
  it->second->Signal(SIGKILL);
  const std::optional<int> status = it->second->Wait(absl::Now() + kReapTimeout);
  it->second.reset();
  if (status != 128 + SIGKILL) {
    return absl::InternalError(absl::StrCat("the agent of ", lab_.name(node), " ended with ",
                                            status.has_value() ? absl::StrCat(*status) : "nothing",
                                            " instead of SIGKILL"));
  }
  return absl::OkStatus();
}

absl::Status LabClientAgents::Restart(int node) {
  if (processes_.count(node) == 0 || processes_[node] != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no killed agent on ", lab_.name(node)));
  }
  return Launch(node);
}

AgentHealth LabClientAgents::HealthOf(int node) {
  absl::StatusOr<std::optional<std::string>> body =
      consul_.Get(absl::StrCat("/v1/health/node/", lab_.name(node)));
  if (!body.ok()) return "no answer";
  if (!body->has_value()) return "unknown node";
  const nlohmann::json checks = nlohmann::json::parse(**body, nullptr, false);
  if (!checks.is_array()) return "no answer";
  for (const nlohmann::json& check : checks) {
    if (check.is_object() && check.value("CheckID", "") == "serfHealth") {
      return check.value("Status", "unknown");
    }
  }
  return "unknown node";  // a node without serfHealth is not an agent's
}

absl::Status LabClientAgents::AwaitAlive(int node, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  AgentHealth health;
  do {
    health = HealthOf(node);
    if (health == "passing") return absl::OkStatus();
    absl::SleepFor(kPoll);
  } while (absl::Now() < deadline);
  return absl::DeadlineExceededError(absl::StrCat("the servers did not see the agent of ",
                                                  lab_.name(node), " alive within ",
                                                  absl::FormatDuration(timeout), ": ", health));
}

void LabClientAgents::KeepFilesAndPrintLogs() {
  keep_files_ = true;
  std::fprintf(stderr, "lab client agents' files kept in %s\n", dir_.c_str());
  for (const auto& [node, process] : processes_) {
    std::fprintf(stderr, "--- agent %s log, last lines:\n%s\n", lab_.name(node).c_str(),
                 LogTail(node, 30).c_str());
  }
}

std::string LabClientAgents::LogTail(int node, int lines) const {
  return integration::FileTail(absl::StrCat(dir_, "/", lab_.name(node), "/agent.log"), lines);
}

}  // namespace registry::partition
