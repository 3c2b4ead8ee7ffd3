// SPDX-License-Identifier: Apache-2.0
// integration/testing/consul_cluster.h
//
// A real Consul cluster of N servers on loopback for fault tests: `consul agent -server
// -bootstrap_expect N` processes (not -dev), each with a persistent data dir of its own and a free
// port for every listener, joined to one another, `session_ttl_min` 1 s, no ACLs. A server can be
// killed (SIGKILL), restarted on the same data dir and ports (it rejoins with its raft state),
// paused (SIGSTOP) and resumed. With N = 1 it is a single real server whose state survives a
// crash, which `consul agent -dev` cannot give.
//
// Start() returns once a leader is elected and every server serves a session create. The
// destructor kills every server and removes the files unless KeepFilesAndPrintLogs() was called.
//
// Thread safety: one thread at a time; addresses are immutable after Start().
#ifndef INTEGRATION_TESTING_CONSUL_CLUSTER_H_
#define INTEGRATION_TESTING_CONSUL_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {

struct ConsulClusterOptions {
  std::string binary;  // path of the consul binary
  int servers = 3;
};

class ConsulCluster {
 public:
  // Starts the servers and waits (at most 60 s) for a leader and for every server to serve.
  // Errors: FailedPrecondition without a binary; Internal with the logs' tails otherwise.
  static absl::StatusOr<std::unique_ptr<ConsulCluster>> Start(const ConsulClusterOptions& options);
  ~ConsulCluster();
  ConsulCluster(const ConsulCluster&) = delete;
  ConsulCluster& operator=(const ConsulCluster&) = delete;

  int size() const { return static_cast<int>(servers_.size()); }
  // "127.0.0.1:PORT" of server `i`'s HTTP API.
  std::string address(int i) const;
  // Every server's HTTP address, comma-separated: a `server-lists` value.
  std::string server_list() const;

  // The index of the leader as the live servers see it, waiting at most `timeout` for one that
  // is not `not_this` (-1: any). DeadlineExceeded when there is none by then.
  absl::StatusOr<int> AwaitLeader(absl::Duration timeout, int not_this = -1);
  // Waits until server `i` serves a session create (it has a leader and knows its node).
  absl::Status AwaitServing(int i, absl::Duration timeout);

  // SIGKILL, and reaps it.
  void Kill(int i);
  // Starts server `i` again on its data dir and ports (after Kill). Does not wait.
  absl::Status Restart(int i);
  // SIGSTOP / SIGCONT.
  void Pause(int i);
  void Resume(int i);
  bool running(int i) const { return servers_[i].process != nullptr; }

  // Keeps the directory after destruction and prints every server's log tail on stderr.
  void KeepFilesAndPrintLogs();

 private:
  struct Server {
    std::string dir;         // config.json, agent.log, data/
    std::vector<int> ports;  // http, serf_lan, serf_wan, server
    std::unique_ptr<Subprocess> process;
  };

  ConsulCluster(ConsulClusterOptions options, std::string dir)
      : options_(std::move(options)), dir_(std::move(dir)) {}
  absl::Status WriteConfig(int i) const;
  absl::Status Launch(int i);
  std::string LogTail(int i, int lines) const;

  const ConsulClusterOptions options_;
  const std::string dir_;
  std::vector<Server> servers_;
  bool keep_files_ = false;
};

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_CONSUL_CLUSTER_H_
