// SPDX-License-Identifier: Apache-2.0
// integration/testing/consul_agent.cc
#include "integration/testing/consul_agent.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"

namespace registry::integration {
namespace {

constexpr int kListeners = 4;  // http, serf_lan, serf_wan, server
constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr int kLaunchAttempts = 3;  // another process may take a port between pick and bind

// Rights of the code under test: what the repository, its sessions and locks need.
constexpr char kClientRules[] =
    "key_prefix \"\" { policy = \"write\" }\n"
    "session_prefix \"\" { policy = \"write\" }\n"
    "node_prefix \"\" { policy = \"read\" }\n"
    // The node of the instance sessions (repository/session_node.h), registered by the plugin.
    "node \"registry-consul\" { policy = \"write\" }\n";

std::string RandomUuid() {
  absl::BitGen gen;
  auto hex = [&gen](int digits) {
    std::string out;
    for (int i = 0; i < digits; ++i) out += "0123456789abcdef"[absl::Uniform(gen, 0, 16)];
    return out;
  };
  return absl::StrCat(hex(8), "-", hex(4), "-", hex(4), "-", hex(4), "-", hex(12));
}

}  // namespace

absl::StatusOr<std::vector<int>> FreeLoopbackPorts(int count) {
  std::vector<int> fds;
  std::vector<int> ports;
  absl::Status status;
  for (int i = 0; i < count && status.ok(); ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = absl::InternalError("cannot reserve a loopback port");
    } else {
      ports.push_back(ntohs(addr.sin_port));
    }
    if (fd >= 0) fds.push_back(fd);
  }
  for (int fd : fds) close(fd);
  if (!status.ok()) return status;
  return ports;
}

absl::StatusOr<std::string> MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(base != nullptr && *base != '\0' ? base : "/tmp", "/registry-consul-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", pattern, " failed"));
  }
  return pattern;
}

std::string ConsulBinary(const std::string& fallback) {
  const char* binary = std::getenv("REGISTRY_TEST_CONSUL_BIN");
  return binary != nullptr && *binary != '\0' ? binary : fallback;
}

absl::StatusOr<std::unique_ptr<ConsulAgent>> ConsulAgent::Start(const ConsulAgentOptions& options) {
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no consul binary at ", options.binary,
        ": run scripts/get-consul.sh, or set REGISTRY_TEST_CONSUL_BIN to a consul binary"));
  }
  absl::Status status;
  for (int attempt = 0; attempt < kLaunchAttempts; ++attempt) {
    absl::StatusOr<std::vector<int>> ports = FreeLoopbackPorts(kListeners);
    if (!ports.ok()) return ports.status();
    absl::StatusOr<std::string> dir = MakeTempDir();
    if (!dir.ok()) return dir.status();
    std::unique_ptr<ConsulAgent> agent(new ConsulAgent(options, *dir, *std::move(ports)));
    if (options.tls) {
      absl::StatusOr<TestPki> pki = MakeTestPki(*dir, options.tls_server_names);
      if (!pki.ok()) return pki.status();
      agent->pki_ = *std::move(pki);
    }
    status = agent->Launch();
    if (status.ok()) status = agent->CreateClientToken();
    if (status.ok()) return agent;
  }
  return status;
}

ConsulAgent::ConsulAgent(ConsulAgentOptions options, std::string dir, std::vector<int> ports)
    : options_(std::move(options)),
      dir_(std::move(dir)),
      ports_(std::move(ports)),
      address_(absl::StrCat("127.0.0.1:", ports_[0])),
      master_token_(options_.acl ? RandomUuid() : ""),
      client_token_(options_.acl ? RandomUuid() : "") {}

ConsulAgent::~ConsulAgent() {
  Kill();
  std::error_code ignored;  // a file that cannot be removed leaves only itself behind
  if (!keep_files_) std::filesystem::remove_all(dir_, ignored);
}

absl::Status ConsulAgent::Launch() {
  nlohmann::json config = {
      {"session_ttl_min", "1s"},
      {"disable_update_check", true},
      {"ports",
       {{options_.tls ? "https" : "http", ports_[0]},
        {"serf_lan", ports_[1]},
        {"serf_wan", ports_[2]},
        {"server", ports_[3]},
        {"dns", -1},
        {"grpc", -1}}},
  };
  if (options_.acl) {
    config["primary_datacenter"] = "dc1";
    config["acl"] = {
        {"enabled", true}, {"default_policy", "deny"}, {"tokens", {{"master", master_token_}}}};
  }
  if (options_.tls) {
    // Consul 1.8.7's keys. verify_incoming_https, not verify_incoming: the latter also demands
    // TLS on the server RPC port, where the -dev agent talks to itself in plain TCP.
    config["ports"]["http"] = -1;
    config["verify_incoming_https"] = true;
    config["ca_file"] = pki_.ca_file;
    config["cert_file"] = pki_.server_cert;
    config["key_file"] = pki_.server_key;
  }
  std::ofstream(dir_ + "/config.json") << config.dump(2) << "\n";
  // Through sh only to send the output to a file: a full pipe nobody drains would stall the agent.
  absl::StatusOr<std::unique_ptr<Subprocess>> process =
      Subprocess::Start({"/bin/sh", "-c", "exec \"$0\" agent -dev -config-file=\"$1\" >\"$2\" 2>&1",
                         options_.binary, dir_ + "/config.json", dir_ + "/agent.log"});
  if (!process.ok()) return process.status();
  process_ = *std::move(process);
  absl::Status ready = AwaitReady();
  if (!ready.ok()) {
    Kill();
    return absl::InternalError(absl::StrCat("consul agent (", options_.binary, ") at ", address_,
                                            " did not start: ", ready.message(), "\n", LogTail()));
  }
  return absl::OkStatus();
}

absl::Status ConsulAgent::AwaitReady() {
  const absl::Time deadline = absl::Now() + kStartTimeout;
  absl::Status last = absl::DeadlineExceededError("not ready");
  while (absl::Now() < deadline) {
    if (std::optional<int> exit_code = process_->Wait(absl::Now() + absl::Milliseconds(20))) {
      return absl::InternalError(absl::StrCat("exited with code ", *exit_code));
    }
    // A session create needs a leader and the agent's node in the catalog: the last to be ready.
    absl::StatusOr<nlohmann::json> session =
        PutJson("/v1/session/create", R"({"Name":"readiness probe"})");
    if (!session.ok()) {
      last = session.status();
      continue;
    }
    const std::string id = session->value("ID", "");
    return PutJson("/v1/session/destroy/" + id, "").status();
  }
  return absl::DeadlineExceededError(
      absl::StrCat("not ready after ", absl::FormatDuration(kStartTimeout), ": ", last.message()));
}

absl::Status ConsulAgent::CreateClientToken() {
  if (!options_.acl) return absl::OkStatus();
  const nlohmann::json policy_body = {{"Name", "registry-tests"}, {"Rules", kClientRules}};
  absl::StatusOr<nlohmann::json> policy = PutJson("/v1/acl/policy", policy_body.dump());
  if (!policy.ok()) return policy.status();
  // The secret is chosen here, so that a restarted agent can be given the same one.
  const nlohmann::json token_body = {{"Description", "code under test"},
                                     {"AccessorID", RandomUuid()},
                                     {"SecretID", client_token_},
                                     {"Policies", {{{"ID", policy->value("ID", "")}}}}};
  return PutJson("/v1/acl/token", token_body.dump()).status();
}

std::string ConsulAgent::base_url() const {
  return absl::StrCat(options_.tls ? "https://" : "http://", address_);
}

absl::StatusOr<nlohmann::json> ConsulAgent::PutJson(const std::string& path,
                                                    const std::string& body) const {
  absl::StatusOr<HttpReply> reply =
      HttpCall("PUT", base_url() + path, absl::Seconds(5), body, master_token_,
               // The agent's certificate may carry only a name the test checks clients against.
               {pki_.ca_file, pki_.client_cert, pki_.client_key, /*verify_name=*/false});
  if (!reply.ok()) return reply.status();
  if (reply->status != 200) {
    return absl::InternalError(absl::StrCat("PUT ", path, ": ", reply->status, " ", reply->body));
  }
  nlohmann::json json = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InternalError(absl::StrCat("PUT ", path, ": not JSON"));
  return json;
}

absl::Status ConsulAgent::Restart() {
  Kill();
  absl::Status status = Launch();
  // The policy and token lived in the old agent's memory: make them again, with the same secret.
  if (status.ok()) status = CreateClientToken();
  return status;
}

void ConsulAgent::Kill() {
  if (process_ == nullptr) return;
  process_->Signal(SIGKILL);
  process_->Wait(absl::Now() + absl::Seconds(10));
  process_.reset();
}

void ConsulAgent::KeepFilesAndPrintLog() {
  keep_files_ = true;
  std::fprintf(stderr, "consul agent log (kept in %s), last lines:\n%s\n", dir_.c_str(),
               LogTail().c_str());
}

std::string ConsulAgent::LogTail(int lines) const { return FileTail(dir_ + "/agent.log", lines); }

std::string FileTail(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  const size_t first = all.size() > static_cast<size_t>(lines) ? all.size() - lines : 0;
  return absl::StrJoin(all.begin() + first, all.end(), "\n");
}

}  // namespace registry::integration
