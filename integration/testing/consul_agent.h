// SPDX-License-Identifier: Apache-2.0
// integration/testing/consul_agent.h
//
// A real `consul agent -dev` for integration tests: loopback only, a free port for every
// listener it opens (HTTP, Serf LAN and WAN, server RPC; DNS and gRPC off), `session_ttl_min`
// 1 s so short-TTL tests run in seconds, its config and log in a temp dir of its own. Optionally
// with ACLs on (`default_policy` deny, a master token) and a least-privilege token for the code
// under test: write on every key and session, read on nodes, nothing else. Optionally with TLS:
// certificates made in its dir (test_pki.h), the HTTP API on https only (the http port off) and
// a client certificate required (`verify_incoming_https`).
//
// Start() returns once the agent has a leader, has registered its node and accepts a session
// (what a session create needs), so a test never meets a half-started agent. The destructor
// kills the agent (SIGKILL: a -dev agent keeps its state in memory) and reaps it; its files are
// removed unless KeepFiles() was called (a failing test keeps the log to read).
//
// Thread safety: a ConsulAgent is used by one thread at a time; address() and tokens are
// immutable after Start().
#ifndef INTEGRATION_TESTING_CONSUL_AGENT_H_
#define INTEGRATION_TESTING_CONSUL_AGENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/subprocess.h"
#include "integration/testing/test_pki.h"
#include "nlohmann/json.hpp"

namespace registry::integration {

struct ConsulAgentOptions {
  std::string binary;  // path of the consul binary
  bool acl = false;    // ACLs on, default deny
  bool tls = false;    // https only, client certificates required
  // With tls: the subjectAltName of the agent's certificate.
  std::string tls_server_names = kAllServerNames;
};

class ConsulAgent {
 public:
  // Starts the agent and waits (at most 30 s) until it serves sessions. Errors: FailedPrecondition
  // when `binary` does not exist or is not executable; Internal with the log's tail when it
  // exits or does not become ready.
  static absl::StatusOr<std::unique_ptr<ConsulAgent>> Start(const ConsulAgentOptions& options);
  ~ConsulAgent();
  ConsulAgent(const ConsulAgent&) = delete;
  ConsulAgent& operator=(const ConsulAgent&) = delete;

  // "127.0.0.1:PORT" of the HTTP API (https with tls).
  const std::string& address() const { return address_; }
  // "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT".
  std::string base_url() const;
  // With tls: the certificates (the client certificate is accepted); else empty paths.
  const TestPki& pki() const { return pki_; }
  // Token with every right (the ACL master token); "" without ACLs.
  const std::string& master_token() const { return master_token_; }
  // Least-privilege token for the code under test; "" without ACLs.
  const std::string& client_token() const { return client_token_; }

  // Kills the agent and starts a new one on the same ports: a restarted server with an empty
  // state (a -dev agent keeps nothing). Tokens stay the same. Errors: as Start.
  absl::Status Restart();

  // For a failed test: keeps the agent's directory (config and log) after destruction and
  // prints its path and the log's last lines on stderr.
  void KeepFilesAndPrintLog();
  // The last `lines` lines of the agent's log.
  std::string LogTail(int lines = 40) const;

 private:
  ConsulAgent(ConsulAgentOptions options, std::string dir, std::vector<int> ports);
  // Writes the config file, launches the agent and waits until it is ready.
  absl::Status Launch();
  absl::Status AwaitReady();
  absl::Status CreateClientToken();
  // PUT base_url() + `path` with `body` as the master token; the JSON reply when it is 200.
  absl::StatusOr<nlohmann::json> PutJson(const std::string& path, const std::string& body) const;
  void Kill();

  const ConsulAgentOptions options_;
  const std::string dir_;         // config.json and agent.log
  const std::vector<int> ports_;  // http, serf_lan, serf_wan, server
  const std::string address_;
  const std::string master_token_;
  const std::string client_token_;
  TestPki pki_;
  std::unique_ptr<Subprocess> process_;
  bool keep_files_ = false;
};

// `count` distinct loopback ports that were free a moment ago: all bound at once, then closed.
absl::StatusOr<std::vector<int>> FreeLoopbackPorts(int count);

// The last `lines` lines of the file at `path` ("" when it cannot be read).
std::string FileTail(const std::string& path, int lines);

// A new directory $TMPDIR/registry-consul-XXXXXX (or under /tmp).
absl::StatusOr<std::string> MakeTempDir();

// The consul binary the tests use: $REGISTRY_TEST_CONSUL_BIN if set, else `fallback`.
std::string ConsulBinary(const std::string& fallback);

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_CONSUL_AGENT_H_
