// SPDX-License-Identifier: Apache-2.0
// integration/partition/partition_fixture.cc
#include "integration/partition/partition_fixture.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "integration/history/history_check.h"
#include "integration/history/history_recorder.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/eventually.h"
#include "nlohmann/json.hpp"

namespace registry::partition {
namespace {

constexpr char kNamespace[] = "partition";

}  // namespace

std::string Ms(absl::Duration d) {
  return absl::StrFormat("%.0f ms", absl::ToDoubleMilliseconds(d));
}

void PartitionTest::SetUp() {
  if (std::string why = NetworkLab::Unsupported(); !why.empty()) GTEST_SKIP() << why;
  absl::StatusOr<std::unique_ptr<NetworkLab>> lab =
      NetworkLab::Create({"s0", "s1", "s2", "c0", "c1", "c2", "c3", "app", "obs"});
  ASSERT_TRUE(lab.ok()) << lab.status();
  lab_ = *std::move(lab);
  absl::StatusOr<std::unique_ptr<NamespaceThread>> probe =
      NamespaceThread::Start(lab_->netns_path(kObserver));
  ASSERT_TRUE(probe.ok()) << probe.status();
  probe_ = *std::move(probe);
  absl::StatusOr<std::unique_ptr<LabConsul>> consul =
      LabConsul::Start(*lab_, *probe_,
                       {.binary = integration::ConsulBinary(CONSUL_BIN),
                        .server_nodes = {kServers[0], kServers[1], kServers[2]}});
  ASSERT_TRUE(consul.ok()) << consul.status();
  consul_ = *std::move(consul);
  std::vector<int> instance_nodes(std::begin(kWorkers), std::end(kWorkers));
  instance_nodes.push_back(kApp);
  if (topology_ == Topology::kClientAgents) {
    absl::StatusOr<std::unique_ptr<LabClientAgents>> agents = LabClientAgents::Start(
        *lab_, *consul_, integration::ConsulBinary(CONSUL_BIN), instance_nodes);
    ASSERT_TRUE(agents.ok()) << agents.status();
    agents_ = *std::move(agents);
  }
  WriteConfigs();
  absl::StatusOr<std::string> initial = Ctl({"put", "/safety/counter", "0"});
  ASSERT_TRUE(initial.ok()) << initial.status();

  for (int node : kWorkers) {
    absl::StatusOr<std::unique_ptr<integration::Subprocess>> process =
        lab_->Spawn(node, {REGISTRYCTL_BIN, "--config=" + config_, "ephemeral",
                           absl::StrCat("/online/", lab_->name(node)), "up"});
    ASSERT_TRUE(process.ok()) << process.status();
    const std::optional<std::string> ready = (*process)->ReadLine(absl::Now() + absl::Seconds(20));
    ASSERT_EQ(ready, "ready") << (*process)->err();
    ephemerals_.push_back(*std::move(process));
  }
  ConsulRepositoryOptions options;
  options.client.servers = InstanceServers();
  options.client.request_timeout = kRequestTimeout;
  options.client.connect_timeout = absl::Milliseconds(500);
  options.namespace_name = kNamespace;
  options.session_ttl = kTtl;
  options.session_lock_delay = kLockDelay;
  options.block_query_wait = absl::Seconds(2);
  options.lock_retry = absl::Milliseconds(100);
  // The agent's own node (see the header): what Consul's own tools do with a local agent.
  if (topology_ == Topology::kClientAgents) options.session_node = "";
  absl::StatusOr<std::unique_ptr<AppInstance>> app =
      AppInstance::Start(lab_->netns_path(kApp), options, "/online/app", {"/online", "/safety"});
  ASSERT_TRUE(app.ok()) << app.status();
  app_ = *std::move(app);
  absl::StatusOr<std::string> history_dir =
      history::FreshHistoryDir(history::CurrentTestHistoryName());
  ASSERT_TRUE(history_dir.ok()) << history_dir.status();
  history_dir_ = *std::move(history_dir);
  realtime_to_monotonic_ns_ = history::HostMonotonicNanos() - absl::ToUnixNanos(absl::Now());
  for (int node : instance_nodes) {
    absl::StatusOr<std::unique_ptr<FencedWriter>> writer =
        FencedWriter::Start(lab_->name(node), lab_->netns_path(node), options, history_dir_);
    ASSERT_TRUE(writer.ok()) << writer.status();
    fenced_[node] = *std::move(writer);
  }

  workers_ = std::make_unique<LockWorkers>(
      *lab_, std::vector<int>(std::begin(kWorkers), std::end(kWorkers)),
      LockWorkersOptions{.registryctl = REGISTRYCTL_BIN,
                         .critical_section = REGISTRY_CRITICAL_SECTION,
                         .config = config_,
                         .log = absl::StrCat(integration::ProcessTempDir(), "/sections_",
                                             history::CurrentTestHistoryName(), ".log"),
                         .command_prefix = lock_client_prefix_});
  workers_->Start();
  registry::testing::Eventually([&] { return workers_->succeeded() >= 4; }, absl::Seconds(60));
  ASSERT_GE(workers_->succeeded(), 4) << "the lock never changed hands before the fault";
}

void PartitionTest::TearDown() {
  if (workers_ != nullptr) workers_->Stop();
  workers_.reset();
  fenced_.clear();
  app_.reset();
  ephemerals_.clear();
  if (HasFailure() && agents_ != nullptr) agents_->KeepFilesAndPrintLogs();
  agents_.reset();
  if (HasFailure() && consul_ != nullptr) consul_->KeepFilesAndPrintLogs();
  consul_.reset();
  probe_.reset();
  lab_.reset();
}

std::optional<RunningSection> PartitionTest::AwaitLongSection() {
  std::optional<RunningSection> running = workers_->AwaitRunning(absl::Seconds(30), true);
  EXPECT_TRUE(running.has_value()) << "no long section started within 30 s";
  return running;
}

std::vector<int> PartitionTest::WorkersBut(int except) const {
  std::vector<int> nodes;
  for (int node : kWorkers) {
    if (node != except) nodes.push_back(node);
  }
  return nodes;
}

std::string PartitionTest::InstanceServers() const {
  // Every namespace has a loopback of its own: the same address is each node's own agent.
  return topology_ == Topology::kClientAgents ? "127.0.0.1:8500" : consul_->server_list();
}

void PartitionTest::WriteConfigs() {
  auto write = [](const std::string& path, const std::string& servers, bool agents_node) {
    std::ofstream(path, std::ios::trunc)
        << "repository:\n  type: Consul\n  props:\n    namespace: " << kNamespace
        << "\n    server-lists: " << servers << (agents_node ? "\n    sessionNode: \"\"" : "")
        << "\n    timeToLiveSeconds: " << absl::ToInt64Seconds(kTtl)
        << "\n    sessionLockDelayMilliseconds: " << absl::ToInt64Milliseconds(kLockDelay)
        << "\n    lockRetryMilliseconds: 100\n    blockQueryTimeMilliseconds: 2000"
        << "\n    requestTimeoutMilliseconds: " << absl::ToInt64Milliseconds(kRequestTimeout)
        << "\n    connectTimeoutMilliseconds: 500\n";
  };
  config_ = integration::ProcessTempDir() + "/partition.yaml";
  write(config_, InstanceServers(), topology_ == Topology::kClientAgents);
  // The observer has no agent: it talks to the servers in either topology.
  observer_config_ = integration::ProcessTempDir() + "/partition_observer.yaml";
  write(observer_config_, consul_->server_list(), false);
}

absl::StatusOr<std::string> PartitionTest::Ctl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {REGISTRYCTL_BIN, "--config=" + observer_config_};
  argv.insert(argv.end(), args.begin(), args.end());
  const integration::RunResult run = integration::RunProcess(lab_->InNode(kObserver, argv));
  if (run.exit_code != 0) {
    return absl::InternalError(absl::StrCat("registryctl ", absl::StrJoin(args, " "), " exited ",
                                            run.exit_code, ": ", run.err));
  }
  return run.out;
}

absl::StatusOr<std::map<std::string, std::string>> PartitionTest::ConsistentRead(
    const std::string& prefix, bool held) {
  absl::StatusOr<std::optional<std::string>> body =
      consul_->Get(absl::StrCat("/v1/kv/", kNamespace, prefix, "/?recurse&consistent"));
  if (!body.ok()) return body.status();
  std::map<std::string, std::string> keys;
  if (!body->has_value()) return keys;  // 404: nothing under it
  const nlohmann::json entries = nlohmann::json::parse(**body, nullptr, false);
  if (!entries.is_array()) return absl::InternalError(absl::StrCat("not a listing: ", **body));
  for (const nlohmann::json& entry : entries) {
    const std::string full = entry.value("Key", "");
    absl::string_view key = full;
    if (!absl::ConsumePrefix(&key, kNamespace)) continue;
    if (held && entry.value("Session", "").empty()) continue;
    std::string value;
    if (entry.contains("Value") && entry["Value"].is_string()) {
      absl::Base64Unescape(entry["Value"].get<std::string>(), &value);
    }
    keys[std::string(key)] = value;
  }
  return keys;
}

}  // namespace registry::partition
