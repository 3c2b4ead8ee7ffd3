// SPDX-License-Identifier: Apache-2.0
// instance/instance.cc
#include "instance/instance.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "consul/exchange_metrics.h"
#include "lock/lock_metrics.h"
#include "repository/connection_publisher.h"
#include "repository/instance_session.h"
#include "repository/key_space.h"
#include "repository/remembered_keys.h"
#include "repository/session_keeper.h"
#include "repository/session_metrics.h"
#include "watch/dispatcher.h"
#include "watch/watch_engine.h"
#include "watch/watch_metrics.h"

namespace registry {
namespace {

// The instance session as code built on the instance sees it: the keeper's session side.
class KeeperSession final : public InstanceSession {
 public:
  KeeperSession(SessionKeeper& keeper, RememberedKeys& keys, ConnectionPublisher& publisher)
      : keeper_(keeper), keys_(keys), publisher_(publisher) {}

  absl::StatusOr<std::string> AcquireSessionId(absl::Time deadline) override {
    return keeper_.AcquireSessionId(deadline);
  }
  absl::Status PersistentWrite(absl::string_view consul_key, bool tree,
                               absl::FunctionRef<absl::Status()> write) override {
    return keys_.PersistentWrites({std::string(consul_key)}, tree, write);
  }
  std::string CurrentSessionId() override { return keeper_.CurrentSessionId(); }
  void ReportSessionInvalid(absl::string_view id) override { keeper_.ReportSessionInvalid(id); }
  int AddSessionObserver(Observer observer) override {
    return publisher_.AddSessionObserver(std::move(observer));
  }
  void RemoveSessionObserver(int id) override { publisher_.RemoveSessionObserver(id); }

 private:
  SessionKeeper& keeper_;
  RememberedKeys& keys_;
  ConnectionPublisher& publisher_;
};

// Every part of one instance, in construction order; destroyed in reverse (the engine, joining
// its IO thread, before everything it uses). The repository closes them before they go.
struct Parts {
  Parts(ConsulRepositoryOptions options_in, KeySpace space_in,
        std::unique_ptr<consul::Client> client_in)
      : options(std::move(options_in)),
        space(std::move(space_in)),
        client(std::move(client_in)),
        keeper(*client, closing,
               SessionKeeperOptions{absl::StrCat("registry:", space.namespace_name()),
                                    options.session_ttl, options.session_lock_delay,
                                    options.lock_retry, options.client.request_timeout,
                                    options.session_node},
               keys, publisher),
        session(keeper, keys, publisher) {}

  // Closes in the repository's order (each step idempotent), for the case where no repository
  // was made to do it: no task on the executor outlives what it refers to.
  ~Parts() {
    keeper.Stop().IgnoreError();
    if (engine != nullptr) engine->Close();
    tasks.Stop();
  }

  const ConsulRepositoryOptions options;
  const KeySpace space;
  const std::unique_ptr<consul::Client> client;
  consul::Canceller closing;
  // The serial executor, and the workers of the engine's listeners; no thread before work.
  watch::Dispatcher tasks{watch::DispatcherOptions{}};
  ConnectionPublisher publisher{tasks};  // what the keeper publishes, delivered on `tasks`
  RememberedKeys keys;  // what the keeper binds; orders every write of the instance
  SessionKeeper keeper;
  KeeperSession session;
  std::unique_ptr<watch::WatchEngine> engine;  // made once the rest exists
};

absl::StatusOr<std::unique_ptr<watch::WatchEngine>> NewEngine(Parts& parts) {
  watch::WatchEngineOptions options;
  options.block_query_wait = parts.options.block_query_wait;
  options.max_queries_per_watch = parts.options.watch_max_connections;
  const KeySpace* space = &parts.space;
  options.key_mapper = [space](absl::string_view consul_key) {
    return space->RepositoryKey(consul_key);
  };
  return watch::WatchEngine::Create(parts.client.get(), std::move(options), &parts.tasks);
}

}  // namespace

absl::StatusOr<ConsulInstance> NewConsulInstance(ConsulRepositoryOptions options) {
  MakeInstanceMetrics();
  RETURN_IF_ERROR(ValidateConsulRepositoryOptions(options));
  ASSIGN_OR_RETURN(KeySpace space, KeySpace::Create(options.namespace_name));
  ASSIGN_OR_RETURN(std::unique_ptr<consul::Client> client, consul::Client::Create(options.client));
  auto parts = std::make_shared<Parts>(std::move(options), std::move(space), std::move(client));
  ASSIGN_OR_RETURN(parts->engine, NewEngine(*parts));
  lock::LockManagerParts locks{parts->session,
                               *parts->client,
                               parts->closing,
                               *parts->engine,
                               parts->tasks,
                               parts->space,
                               parts->options.session_ttl,
                               parts->options.block_query_wait,
                               parts->options.lock_retry};
  RepositoryParts repository{parts->options, parts->space, *parts->client,   parts->closing,
                             parts->keeper,  parts->keys,  parts->publisher, *parts->engine,
                             parts->tasks,   parts};
  return ConsulInstance{NewConsulRepositoryOn(std::move(repository)), locks};
}

absl::StatusOr<std::unique_ptr<ConsulRepository>> NewConsulRepository(
    ConsulRepositoryOptions options) {
  ASSIGN_OR_RETURN(ConsulInstance instance, NewConsulInstance(std::move(options)));
  return std::move(instance.repository);
}

void MakeInstanceMetrics() {
  consul::RequestMetrics();
  watch::WatchMetrics();
  SessionMetrics();
  lock::LockMetrics();
}

}  // namespace registry
