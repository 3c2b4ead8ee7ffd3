// SPDX-License-Identifier: Apache-2.0
// integration/partition/lab_consul.cc
#include "integration/partition/lab_consul.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"

namespace registry::partition {
namespace {

using integration::HttpCall;
using integration::HttpReply;

constexpr absl::Duration kStartTimeout = absl::Seconds(60);
constexpr absl::Duration kPoll = absl::Milliseconds(50);
constexpr absl::Duration kProbeTimeout = absl::Milliseconds(800);
constexpr int kHttpPort = 8500;
constexpr int kServerPort = 8300;

}  // namespace

absl::StatusOr<std::unique_ptr<LabConsul>> LabConsul::Start(const NetworkLab& lab,
                                                            NamespaceThread& probe,
                                                            LabConsulOptions options) {
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no consul binary at ", options.binary,
        ": run scripts/get-consul.sh, or set REGISTRY_TEST_CONSUL_BIN to a consul binary"));
  }
  if (options.server_nodes.empty()) return absl::InvalidArgumentError("a cluster needs a server");
  absl::StatusOr<std::string> dir = integration::MakeTempDir();
  if (!dir.ok()) return dir.status();
  std::unique_ptr<LabConsul> cluster(new LabConsul(lab, probe, std::move(options), *dir));
  absl::Status status;
  for (int i = 0; i < cluster->size() && status.ok(); ++i) status = cluster->Launch(i);
  if (status.ok()) status = cluster->AwaitWhole(kStartTimeout).status();
  if (!status.ok()) {
    std::string tails;
    for (int i = 0; i < cluster->size(); ++i) {
      absl::StrAppend(&tails, "\n--- server ", i, ":\n", cluster->LogTail(i, 15));
    }
    return absl::InternalError(
        absl::StrCat("consul cluster did not start in the lab: ", status.message(), tails));
  }
  return cluster;
}

LabConsul::~LabConsul() {
  for (std::unique_ptr<integration::Subprocess>& process : processes_) {
    process->Signal(SIGKILL);
    process->Wait(absl::Now() + absl::Seconds(10));
  }
  processes_.clear();
  std::error_code ignored;
  if (!keep_files_) std::filesystem::remove_all(dir_, ignored);
}

std::string LabConsul::address(int i) const {
  return absl::StrCat(lab_.address(node(i)), ":", kHttpPort);
}

std::string LabConsul::server_list() const {
  std::vector<std::string> addresses;
  for (int i = 0; i < size(); ++i) addresses.push_back(address(i));
  return absl::StrJoin(addresses, ",");
}

absl::Status LabConsul::Launch(int i) {
  const std::string dir = absl::StrCat(dir_, "/s", i);
  std::filesystem::create_directories(dir + "/data");
  const nlohmann::json config = {
      {"session_ttl_min", "1s"},
      {"disable_update_check", true},
      {"performance", {{"raft_multiplier", 1}}},
      {"ports", {{"dns", -1}, {"grpc", -1}}},
  };
  std::ofstream(dir + "/config.json") << config.dump(2) << "\n";
  const std::string ip = lab_.address(node(i));
  // Through sh only to send the output to a file.
  std::vector<std::string> argv = {"/bin/sh",
                                   "-c",
                                   "log=$1; shift; exec \"$@\" >>\"$log\" 2>&1",
                                   "sh",
                                   dir + "/agent.log",
                                   options_.binary,
                                   "agent",
                                   "-server",
                                   absl::StrCat("-bootstrap-expect=", size()),
                                   absl::StrCat("-bind=", ip),
                                   absl::StrCat("-client=", ip),
                                   absl::StrCat("-node=s", i),
                                   "-datacenter=dc1",
                                   absl::StrCat("-data-dir=", dir, "/data"),
                                   absl::StrCat("-config-file=", dir, "/config.json"),
                                   "-retry-interval=1s"};
  for (int j = 0; j < size(); ++j) {
    if (j != i) argv.push_back(absl::StrCat("-retry-join=", lab_.address(node(j))));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<integration::Subprocess> process, lab_.Spawn(node(i), argv));
  processes_.push_back(std::move(process));
  return absl::OkStatus();
}

std::optional<int> LabConsul::LeaderAsSeenBy(int i) {
  absl::StatusOr<HttpReply> reply;
  const std::string url = absl::StrCat("http://", address(i), "/v1/status/leader");
  probe_.Run([&] { reply = HttpCall("GET", url, kProbeTimeout); });
  if (!reply.ok() || reply->status != 200) return std::nullopt;
  // "\"10.199.X.N:8300\"", or "\"\"" without a leader.
  absl::string_view body = absl::StripAsciiWhitespace(reply->body);
  body = absl::StripPrefix(absl::StripSuffix(body, "\""), "\"");
  for (int j = 0; j < size(); ++j) {
    if (body == absl::StrCat(lab_.address(node(j)), ":", kServerPort)) return j;
  }
  return std::nullopt;
}

absl::Status LabConsul::Serving(int i) {
  absl::StatusOr<HttpReply> created;
  const std::string base = absl::StrCat("http://", address(i), "/v1/session/");
  probe_.Run([&] {
    created = HttpCall("PUT", base + "create", absl::Seconds(2),
                       R"({"Name":"readiness probe","TTL":"10s"})");
    if (!created.ok() || created->status != 200) return;
    const nlohmann::json json = nlohmann::json::parse(created->body, nullptr, false);
    const std::string id = json.is_object() ? json.value("ID", "") : "";
    HttpCall("PUT", base + "destroy/" + id, absl::Seconds(2)).IgnoreError();
  });
  if (!created.ok()) return created.status();
  if (created->status != 200) {
    return absl::UnavailableError(absl::StrCat(created->status, " ", created->body));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> LabConsul::AwaitLeader(absl::Duration timeout, int not_this) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::map<int, int> votes;  // leader -> servers naming it
    for (int i = 0; i < size(); ++i) {
      if (std::optional<int> leader = LeaderAsSeenBy(i); leader.has_value()) ++votes[*leader];
    }
    for (const auto& [leader, count] : votes) {
      if (2 * count > size() && leader != not_this) return last_leader_ = leader;
    }
    absl::SleepFor(kPoll);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("no leader named by a majority within ", absl::FormatDuration(timeout)));
}

absl::StatusOr<int> LabConsul::AwaitWhole(absl::Duration timeout, std::string* missing) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string waiting_for;
  while (absl::Now() < deadline) {
    std::optional<int> agreed;
    bool whole = true;
    for (int i = 0; i < size() && whole; ++i) {
      const std::optional<int> leader = LeaderAsSeenBy(i);
      if (!leader.has_value() || (agreed.has_value() && *agreed != *leader)) {
        waiting_for = absl::StrCat("server ", i, " names ",
                                   leader.has_value() ? absl::StrCat("s", *leader) : "no leader");
        whole = false;
      }
      agreed = leader;
    }
    for (int i = 0; i < size() && whole; ++i) {
      if (absl::Status serving = Serving(i); !serving.ok()) {
        waiting_for = absl::StrCat("server ", i, " does not serve: ", serving.message());
        whole = false;
      }
    }
    if (missing != nullptr) *missing = waiting_for;
    if (whole) return last_leader_ = *agreed;
    absl::SleepFor(kPoll);
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "the cluster was not whole within ", absl::FormatDuration(timeout), ": ", waiting_for));
}

absl::StatusOr<std::optional<std::string>> LabConsul::Get(const std::string& path_and_query) {
  absl::Status last = absl::UnavailableError("no server asked");
  for (int attempt = 0; attempt < size(); ++attempt) {
    const int i = ((last_leader_ >= 0 ? last_leader_ : 0) + attempt) % size();
    absl::StatusOr<HttpReply> reply;
    const std::string url = absl::StrCat("http://", address(i), path_and_query);
    probe_.Run([&] { reply = HttpCall("GET", url, absl::Seconds(3)); });
    if (reply.ok() && reply->status == 200) return std::optional<std::string>(reply->body);
    if (reply.ok() && reply->status == 404) return std::optional<std::string>();
    last = reply.ok()
               ? absl::UnavailableError(absl::StrCat(url, ": ", reply->status, " ", reply->body))
               : reply.status();
  }
  return last;
}

void LabConsul::KeepFilesAndPrintLogs() {
  keep_files_ = true;
  std::fprintf(stderr, "lab consul files kept in %s\n", dir_.c_str());
  for (int i = 0; i < size(); ++i) {
    std::fprintf(stderr, "--- server %d log, last lines:\n%s\n", i, LogTail(i, 30).c_str());
  }
}

std::string LabConsul::LogTail(int i, int lines) const {
  return integration::FileTail(absl::StrCat(dir_, "/s", i, "/agent.log"), lines);
}

}  // namespace registry::partition
