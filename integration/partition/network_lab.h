// SPDX-License-Identifier: Apache-2.0
// integration/partition/network_lab.h
//
// NetworkLab: a private network of Linux network namespaces for partition tests, and the faults
// it can inject and heal. Nothing it does touches the host's interfaces, routes or firewall:
//
//   - names: every namespace is "rcp<pid>-<node>" (<pid> the test process's), the hub is
//     "rcp<pid>-hub". Create() first removes the namespaces of that scheme whose <pid> is dead
//     (or is this process's: left by an earlier process with the same pid), killing the
//     processes still inside them;
//   - the hub namespace holds a Linux bridge "br0"; node i has a namespace of its own joined to
//     the bridge by a veth pair: the node end is "eth0" with address 10.199.X.(10+i)/24 (X picked
//     from the pid, so concurrent labs differ; the subnet exists on the lab's link only), the hub
//     end "p<i>" is a bridge port. Loopback is up everywhere;
//   - faults are nftables rules in table `inet rcp_lab` of the node's own namespace (hooks input
//     and output), or the node's bridge port set down in the hub. Each node's rules are replaced
//     as one nft transaction. Faults add up until HealAll() removes every one of them:
//       Isolate(n)       drop every packet to or from n except on loopback;
//       Partition(A, B)  nodes of A drop packets from and to the addresses of B, and B those of
//                        A; nodes in neither group keep reaching both;
//       Loss(n, p)       drop p % of n's packets in each direction (numgen random mod 100 < p),
//                        loopback excepted;
//       PortDown(n)      n's bridge port down: its link has no carrier.
//
// Processes: Spawn() and InNode() run a command inside a node's namespace through
// `ip netns exec`, as a child of this process (the pid is the command's own). The destructor
// kills (SIGKILL, by pid) every process found in the lab's namespaces, spawned or not (e.g. the
// grandchildren of a spawned shell), waits (bounded) until none is left, then deletes every
// namespace it created, by name. Callers destroy their Subprocess objects first.
//
// In-process code reaches a node's network from a NamespaceThread: a thread that joined the
// node's namespace (setns CLONE_NEWNET) before running anything, so every socket it opens, and
// every thread it starts (they inherit the namespace), lives there.
//
// Thread safety: faults and Spawn from one thread; the accessors are immutable after Create().
#ifndef INTEGRATION_PARTITION_NETWORK_LAB_H_
#define INTEGRATION_PARTITION_NETWORK_LAB_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "integration/testing/subprocess.h"

namespace registry::partition {

class NetworkLab {
 public:
  // Why a lab cannot be built on this machine (not root, no `ip` or `nft`, namespaces refused),
  // or "" when it can. The tests GTEST_SKIP() with this text.
  static std::string Unsupported();

  // Creates the hub and one namespace per name of `nodes` (letters and digits, at most 8).
  // Errors: FailedPrecondition as Unsupported(); Internal naming the command that failed (what
  // was created is removed again).
  static absl::StatusOr<std::unique_ptr<NetworkLab>> Create(const std::vector<std::string>& nodes);
  ~NetworkLab();
  NetworkLab(const NetworkLab&) = delete;
  NetworkLab& operator=(const NetworkLab&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  const std::string& name(int node) const { return nodes_[node].name; }
  // The namespace's name, and its path for setns.
  const std::string& netns(int node) const { return nodes_[node].netns; }
  std::string netns_path(int node) const { return "/run/netns/" + netns(node); }
  // "10.199.X.(10+node)".
  const std::string& address(int node) const { return nodes_[node].address; }
  // The node named `name`, or -1.
  int index(absl::string_view name) const;
  // The lab's files (nft scripts); removed by the destructor.
  const std::string& dir() const { return dir_; }

  // `argv` prefixed so that it runs in `node`'s namespace: {ip, netns, exec, <netns>, argv...}.
  std::vector<std::string> InNode(int node, const std::vector<std::string>& argv) const;
  // Starts InNode(node, argv).
  absl::StatusOr<std::unique_ptr<integration::Subprocess>> Spawn(
      int node, const std::vector<std::string>& argv) const;

  // The faults (see above). Errors: Internal with nft's or ip's message.
  absl::Status Isolate(int node);
  absl::Status Partition(const std::vector<int>& a, const std::vector<int>& b);
  absl::Status Loss(int node, int percent);
  absl::Status PortDown(int node);
  // Removes every fault: each node's rules, every port up.
  absl::Status HealAll();

  // The nft rules of `node` now (`nft list table`), for failure messages.
  std::string ListRules(int node) const;

 private:
  struct Node {
    std::string name;
    std::string netns;
    std::string address;
    std::vector<std::string> input_rules;  // nft rule statements, in order
    std::vector<std::string> output_rules;
    bool port_down = false;
  };

  NetworkLab(std::string prefix, std::string subnet, std::string dir)
      : prefix_(std::move(prefix)), subnet_(std::move(subnet)), dir_(std::move(dir)) {}
  absl::Status Build(const std::vector<std::string>& names);
  // Replaces `node`'s table with its current rules.
  absl::Status ApplyRules(int node);
  // Runs `ip ARGS...`; Internal with its stderr on failure.
  absl::Status Ip(const std::vector<std::string>& args) const;

  const std::string prefix_;  // "rcp<pid>"
  const std::string subnet_;  // "10.199.X"
  const std::string dir_;
  std::string hub_;                // the hub's namespace, once created
  std::vector<std::string> made_;  // every namespace created, in order
  std::vector<Node> nodes_;
};

// A thread that joined one network namespace and runs the tasks given to Run() one at a time.
class NamespaceThread {
 public:
  // Starts the thread and joins the namespace at `netns_path` (/run/netns/NAME). Errors:
  // Internal naming the path when open or setns fails.
  static absl::StatusOr<std::unique_ptr<NamespaceThread>> Start(const std::string& netns_path);
  ~NamespaceThread();  // lets a running task finish, then joins
  NamespaceThread(const NamespaceThread&) = delete;
  NamespaceThread& operator=(const NamespaceThread&) = delete;

  // Runs `task` on the thread and returns when it has finished. Calls from several threads are
  // served one after the other. Must not be called from a task.
  void Run(absl::FunctionRef<void()> task);

 private:
  NamespaceThread() = default;
  void Loop(int netns_fd);

  absl::Mutex callers_;  // one Run() at a time
  absl::Mutex mu_;
  std::function<void()> task_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;  // task_ given and not finished yet
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;  // the namespace was joined (or failed)
  std::string start_error_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_NETWORK_LAB_H_
