// SPDX-License-Identifier: Apache-2.0
// integration/testing/consul_cluster.cc
#include "integration/testing/consul_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"

namespace registry::integration {
namespace {

constexpr int kListeners = 4;  // http, serf_lan, serf_wan, server
constexpr absl::Duration kStartTimeout = absl::Seconds(60);
constexpr absl::Duration kPoll = absl::Milliseconds(50);

// The RPC port of the leader as server `address` sees it; nullopt when it has none or is down.
std::optional<int> LeaderRpcPort(const std::string& address) {
  absl::StatusOr<HttpReply> reply =
      HttpCall("GET", absl::StrCat("http://", address, "/v1/status/leader"), absl::Seconds(1));
  if (!reply.ok() || reply->status != 200) return std::nullopt;
  // "\"127.0.0.1:8300\"", or "\"\"" without a leader.
  absl::string_view body = absl::StripAsciiWhitespace(reply->body);
  body = absl::StripPrefix(absl::StripSuffix(body, "\""), "\"");
  const size_t colon = body.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(body.substr(colon + 1), &port)) {
    return std::nullopt;
  }
  return port;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConsulCluster>> ConsulCluster::Start(
    const ConsulClusterOptions& options) {
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no consul binary at ", options.binary,
        ": run scripts/get-consul.sh, or set REGISTRY_TEST_CONSUL_BIN to a consul binary"));
  }
  if (options.servers < 1) return absl::InvalidArgumentError("a cluster needs a server");
  absl::StatusOr<std::string> dir = MakeTempDir();
  if (!dir.ok()) return dir.status();
  std::unique_ptr<ConsulCluster> cluster(new ConsulCluster(options, *dir));
  absl::StatusOr<std::vector<int>> ports = FreeLoopbackPorts(kListeners * options.servers);
  if (!ports.ok()) return ports.status();
  for (int i = 0; i < options.servers; ++i) {
    Server server;
    server.dir = absl::StrCat(*dir, "/server", i);
    server.ports.assign(ports->begin() + kListeners * i, ports->begin() + kListeners * (i + 1));
    std::filesystem::create_directories(server.dir + "/data");
    cluster->servers_.push_back(std::move(server));
  }
  absl::Status status;
  for (int i = 0; i < options.servers && status.ok(); ++i) status = cluster->Launch(i);
  if (status.ok()) status = cluster->AwaitLeader(kStartTimeout).status();
  for (int i = 0; i < options.servers && status.ok(); ++i) {
    status = cluster->AwaitServing(i, kStartTimeout);
  }
  if (!status.ok()) {
    std::string tails;
    for (int i = 0; i < options.servers; ++i) {
      absl::StrAppend(&tails, "\n--- server ", i, ":\n", cluster->LogTail(i, 15));
    }
    return absl::InternalError(
        absl::StrCat("consul cluster did not start: ", status.message(), tails));
  }
  return cluster;
}

ConsulCluster::~ConsulCluster() {
  for (int i = 0; i < size(); ++i) {
    Resume(i);  // a stopped process cannot be reaped
    Kill(i);
  }
  std::error_code ignored;
  if (!keep_files_) std::filesystem::remove_all(dir_, ignored);
}

std::string ConsulCluster::address(int i) const {
  return absl::StrCat("127.0.0.1:", servers_[i].ports[0]);
}

std::string ConsulCluster::server_list() const {
  std::vector<std::string> addresses;
  for (int i = 0; i < size(); ++i) addresses.push_back(address(i));
  return absl::StrJoin(addresses, ",");
}

absl::Status ConsulCluster::WriteConfig(int i) const {
  const Server& server = servers_[i];
  nlohmann::json join = nlohmann::json::array();
  for (const Server& other : servers_) join.push_back(absl::StrCat("127.0.0.1:", other.ports[1]));
  const nlohmann::json config = {
      {"node_name", absl::StrCat("server", i)},
      {"datacenter", "dc1"},
      {"data_dir", server.dir + "/data"},
      {"server", true},
      {"bootstrap_expect", size()},
      {"bind_addr", "127.0.0.1"},
      {"client_addr", "127.0.0.1"},
      {"session_ttl_min", "1s"},
      {"disable_update_check", true},
      {"retry_join", join},
      // Consul's production recommendation (the default, 5, is meant for development): elections
      // in about a second or two instead of 5 to 20.
      {"performance", {{"raft_multiplier", 1}}},
      {"ports",
       {{"http", server.ports[0]},
        {"serf_lan", server.ports[1]},
        {"serf_wan", server.ports[2]},
        {"server", server.ports[3]},
        {"dns", -1},
        {"grpc", -1}}},
  };
  std::ofstream file(server.dir + "/config.json");
  file << config.dump(2) << "\n";
  return file.good()
             ? absl::OkStatus()
             : absl::InternalError(absl::StrCat("cannot write ", server.dir, "/config.json"));
}

absl::Status ConsulCluster::Launch(int i) {
  if (absl::Status written = WriteConfig(i); !written.ok()) return written;
  Server& server = servers_[i];
  // Through sh only to append the output to a file that survives restarts.
  absl::StatusOr<std::unique_ptr<Subprocess>> process =
      Subprocess::Start({"/bin/sh", "-c", "exec \"$0\" agent -config-file=\"$1\" >>\"$2\" 2>&1",
                         options_.binary, server.dir + "/config.json", server.dir + "/agent.log"});
  if (!process.ok()) return process.status();
  server.process = *std::move(process);
  return absl::OkStatus();
}

absl::StatusOr<int> ConsulCluster::AwaitLeader(absl::Duration timeout, int not_this) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    for (int i = 0; i < size(); ++i) {
      if (!running(i)) continue;
      const std::optional<int> port = LeaderRpcPort(address(i));
      for (int j = 0; port.has_value() && j < size(); ++j) {
        if (servers_[j].ports[3] == *port && j != not_this && running(j)) return j;
      }
    }
    absl::SleepFor(kPoll);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("no leader within ", absl::FormatDuration(timeout)));
}

absl::Status ConsulCluster::AwaitServing(int i, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last = absl::DeadlineExceededError("not serving");
  while (absl::Now() < deadline) {
    absl::StatusOr<HttpReply> created =
        HttpCall("PUT", absl::StrCat("http://", address(i), "/v1/session/create"), absl::Seconds(2),
                 R"({"Name":"readiness probe","TTL":"10s"})");
    if (created.ok() && created->status == 200) {
      const nlohmann::json json = nlohmann::json::parse(created->body, nullptr, false);
      const std::string id = json.is_object() ? json.value("ID", "") : "";
      HttpCall("PUT", absl::StrCat("http://", address(i), "/v1/session/destroy/", id))
          .IgnoreError();
      return absl::OkStatus();
    }
    last = created.ok() ? absl::UnavailableError(absl::StrCat(created->status, " ", created->body))
                        : created.status();
    absl::SleepFor(kPoll);
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "server ", i, " not serving after ", absl::FormatDuration(timeout), ": ", last.message()));
}

void ConsulCluster::Kill(int i) {
  if (servers_[i].process == nullptr) return;
  servers_[i].process->Signal(SIGKILL);
  servers_[i].process->Wait(absl::Now() + absl::Seconds(10));
  servers_[i].process.reset();
}

absl::Status ConsulCluster::Restart(int i) {
  Kill(i);
  return Launch(i);
}

void ConsulCluster::Pause(int i) {
  if (servers_[i].process != nullptr) servers_[i].process->Signal(SIGSTOP);
}

void ConsulCluster::Resume(int i) {
  if (servers_[i].process != nullptr) servers_[i].process->Signal(SIGCONT);
}

void ConsulCluster::KeepFilesAndPrintLogs() {
  keep_files_ = true;
  std::fprintf(stderr, "consul cluster files kept in %s\n", dir_.c_str());
  for (int i = 0; i < size(); ++i) {
    std::fprintf(stderr, "--- server %d log, last lines:\n%s\n", i, LogTail(i, 30).c_str());
  }
}

std::string ConsulCluster::LogTail(int i, int lines) const {
  return FileTail(servers_[i].dir + "/agent.log", lines);
}

}  // namespace registry::integration
