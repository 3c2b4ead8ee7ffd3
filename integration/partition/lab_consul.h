// SPDX-License-Identifier: Apache-2.0
// integration/partition/lab_consul.h
//
// LabConsul: a real Consul cluster inside a NetworkLab (network_lab.h). Server i runs in the
// namespace of lab node `server_nodes[i]` as
//   ip netns exec <netns> consul agent -server -bootstrap-expect N -bind <ip> -client <ip>
//       -retry-join <every server's ip> -node s<i> -data-dir <temp>/s<i>/data -config-file ...
// with the default ports (each namespace has its own), `session_ttl_min` 1 s,
// `performance.raft_multiplier` 1 (elections in a second or two) and no ACLs; its output goes to
// <temp>/s<i>/agent.log. Every HTTP call the fixture itself makes (leader, readiness) goes
// through `probe`, a NamespaceThread in a lab node that the test never cuts off.
//
// Start() returns once a leader is elected and every server serves a session create. The
// destructor kills every server (SIGKILL) and removes the files unless KeepFilesAndPrintLogs()
// was called.
//
// Thread safety: one thread at a time; addresses are immutable after Start().
#ifndef INTEGRATION_PARTITION_LAB_CONSUL_H_
#define INTEGRATION_PARTITION_LAB_CONSUL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "integration/partition/network_lab.h"
#include "integration/testing/subprocess.h"

namespace registry::partition {

struct LabConsulOptions {
  std::string binary;             // path of the consul binary
  std::vector<int> server_nodes;  // lab nodes, one server each
};

class LabConsul {
 public:
  // Starts the servers and waits (at most 60 s) for a leader and for every server to serve.
  // `lab` and `probe` must outlive the cluster. Errors: FailedPrecondition without a binary;
  // Internal with the logs' tails otherwise.
  static absl::StatusOr<std::unique_ptr<LabConsul>> Start(const NetworkLab& lab,
                                                          NamespaceThread& probe,
                                                          LabConsulOptions options);
  ~LabConsul();
  LabConsul(const LabConsul&) = delete;
  LabConsul& operator=(const LabConsul&) = delete;

  int size() const { return static_cast<int>(options_.server_nodes.size()); }
  // The lab node of server `i`.
  int node(int i) const { return options_.server_nodes[i]; }
  // "10.199.X.N:8500": server `i`'s HTTP API, inside the lab.
  std::string address(int i) const;
  // Every server's HTTP address, comma-separated: a `server-lists` value.
  std::string server_list() const;

  // The server that a majority of the servers name as leader, waiting at most `timeout` for
  // one that is not `not_this` (-1: any). DeadlineExceeded when there is none by then.
  absl::StatusOr<int> AwaitLeader(absl::Duration timeout, int not_this = -1);
  // Waits until every server names the same leader and serves a session create (the cluster
  // is whole again after a fault); returns the leader. DeadlineExceeded naming what is missing.
  // `missing`, when not null, gets the last thing waited for ("" if whole at once).
  absl::StatusOr<int> AwaitWhole(absl::Duration timeout, std::string* missing = nullptr);

  // GET http://<some server><path_and_query> from the probe, trying each server in turn
  // (starting with the leader's when one is known); the body of the first 200 answer, nullopt
  // for a 404. Errors: Unavailable with the last answer when no server answered so.
  absl::StatusOr<std::optional<std::string>> Get(const std::string& path_and_query);

  // Keeps the files after destruction and prints every server's log tail on stderr.
  void KeepFilesAndPrintLogs();

 private:
  LabConsul(const NetworkLab& lab, NamespaceThread& probe, LabConsulOptions options,
            std::string dir)
      : lab_(lab), probe_(probe), options_(std::move(options)), dir_(std::move(dir)) {}
  absl::Status Launch(int i);
  // The server that server `i` names as leader; nullopt when none or no answer.
  std::optional<int> LeaderAsSeenBy(int i);
  absl::Status Serving(int i);
  std::string LogTail(int i, int lines) const;

  const NetworkLab& lab_;
  NamespaceThread& probe_;
  const LabConsulOptions options_;
  const std::string dir_;
  std::vector<std::unique_ptr<integration::Subprocess>> processes_;
  int last_leader_ = -1;
  bool keep_files_ = false;
};

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_LAB_CONSUL_H_
