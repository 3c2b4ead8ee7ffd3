// SPDX-License-Identifier: Apache-2.0
// integration/partition/lab_client_agents.h
//
// LabClientAgents: Consul client agents (no -server) beside the instances of a NetworkLab, the
// topology of production, where every host runs an agent and the plugin talks to it. The agent
// of lab node n runs in n's namespace as
//   ip netns exec <netns> consul agent -bind <n's ip> -client 127.0.0.1 -node <n's name>
//       -retry-join <every server's ip> -data-dir <temp>/<name>/data -config-file ...
// so it serves HTTP on 127.0.0.1:8500 of that namespace only (each namespace has a loopback of
// its own: one `server-lists: 127.0.0.1:8500` fits every node), with `session_ttl_min` 1 s as
// the servers; its output goes to <temp>/<name>/agent.log. An agent shares its node's network:
// a fault that cuts the node cuts its agent with it.
//
// Whether an agent is up is judged from the servers (LabConsul::Get, through the probe): its
// node's `serfHealth` check passing means the servers gossip with it again, and then it has
// servers to forward to (a client drops the servers serf calls failed from its list, and gets
// them back only when serf sees them again).
//
// The destructor kills every agent (SIGKILL) and removes the files unless KeepFilesAndPrintLogs()
// was called.
//
// Thread safety: one thread at a time.
#ifndef INTEGRATION_PARTITION_LAB_CLIENT_AGENTS_H_
#define INTEGRATION_PARTITION_LAB_CLIENT_AGENTS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "integration/partition/lab_consul.h"
#include "integration/partition/network_lab.h"
#include "integration/testing/subprocess.h"

namespace registry::partition {

// What the servers say of an agent's node: its `serfHealth` check's status ("passing",
// "critical"), "unknown node" when the catalog does not have it, "no answer" when no server
// answered.
using AgentHealth = std::string;

class LabClientAgents {
 public:
  // Starts an agent on every node of `nodes` and waits (at most 60 s) until the servers see
  // each one alive. `lab` and `consul` must outlive the agents. Errors: Internal with the logs'
  // tails.
  static absl::StatusOr<std::unique_ptr<LabClientAgents>> Start(const NetworkLab& lab,
                                                                LabConsul& consul,
                                                                const std::string& binary,
                                                                const std::vector<int>& nodes);
  ~LabClientAgents();
  LabClientAgents(const LabClientAgents&) = delete;
  LabClientAgents& operator=(const LabClientAgents&) = delete;

  bool has(int node) const { return processes_.count(node) > 0; }

  // SIGKILLs the agent of `node` and reaps it (no leave: its node stays in the catalog, and the
  // servers call it failed when serf's probes go unanswered).
  absl::Status Kill(int node);
  // Starts the agent of `node` again on its data dir.
  absl::Status Restart(int node);

  AgentHealth HealthOf(int node);
  // Waits at most `timeout` until the servers see the agent of `node` alive (serfHealth
  // passing). DeadlineExceeded naming what they said last.
  absl::Status AwaitAlive(int node, absl::Duration timeout);

  // Keeps the files after destruction and prints every agent's log tail on stderr.
  void KeepFilesAndPrintLogs();

 private:
  LabClientAgents(const NetworkLab& lab, LabConsul& consul, std::string binary, std::string dir)
      : lab_(lab), consul_(consul), binary_(std::move(binary)), dir_(std::move(dir)) {}
  absl::Status Launch(int node);
  std::string LogTail(int node, int lines) const;

  const NetworkLab& lab_;
  LabConsul& consul_;
  const std::string binary_;
  const std::string dir_;
  // Node -> its agent; null while killed.
  std::map<int, std::unique_ptr<integration::Subprocess>> processes_;
  bool keep_files_ = false;
};

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_LAB_CLIENT_AGENTS_H_
