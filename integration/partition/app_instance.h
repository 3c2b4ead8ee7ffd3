// SPDX-License-Identifier: Apache-2.0
// integration/partition/app_instance.h
//
// AppInstance: an in-process Consul repository (repository/consul_repository.h) that lives in
// one lab node. Every call to it is made on a NamespaceThread that joined the node's network
// namespace before creating it, so its sockets, and the threads it starts (session renewal,
// restorer, watch IO, listener workers: they inherit the namespace), are all inside the node:
// a fault on that node reaches it as it would reach a separate machine.
//
// Start() persists the ephemeral key `ephemeral_key` = "up" and watches every prefix of
// `watched` with replay_existing, keeping the view the events build (key -> value), and records
// every connection state with the time it was reported.
//
// Thread safety: View(), States() and Run() may be called from any thread.
#ifndef INTEGRATION_PARTITION_APP_INSTANCE_H_
#define INTEGRATION_PARTITION_APP_INSTANCE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "instance/instance.h"
#include "integration/partition/network_lab.h"
#include "registry/repository.h"

namespace registry::partition {

class AppInstance {
 public:
  // Creates the repository in `netns_path`'s namespace, persists the key and starts the
  // watches. Errors: what the namespace thread or the repository reported.
  static absl::StatusOr<std::unique_ptr<AppInstance>> Start(const std::string& netns_path,
                                                            ConsulRepositoryOptions options,
                                                            std::string ephemeral_key,
                                                            std::vector<std::string> watched);
  ~AppInstance();  // Close()
  AppInstance(const AppInstance&) = delete;
  AppInstance& operator=(const AppInstance&) = delete;

  // Runs `call` with the repository on the instance's thread, in its namespace.
  void Run(absl::FunctionRef<void(Repository&)> call);
  // Closes the repository (on its thread); later calls fail. Returns Close()'s status.
  absl::Status Close();

  // The view the watch events built: repository key -> value.
  std::map<std::string, std::string> View();
  // Every connection state reported so far, with when.
  std::vector<std::pair<absl::Time, ConnectionState>> States();
  const std::string& ephemeral_key() const { return ephemeral_key_; }

 private:
  AppInstance(std::string ephemeral_key) : ephemeral_key_(std::move(ephemeral_key)) {}

  const std::string ephemeral_key_;
  std::unique_ptr<NamespaceThread> thread_;
  std::unique_ptr<Repository> repository_;  // created, used and closed on thread_
  bool closed_ = false;
  absl::Mutex mu_;
  std::map<std::string, std::string> view_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<absl::Time, ConnectionState>> states_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_APP_INSTANCE_H_
