// SPDX-License-Identifier: Apache-2.0
// repository/consul_repository.h
//
// The Consul-backed Repository, built on the parts of its instance by the composition root
// (instance/instance.h, whose NewConsulRepository is the factory the plugin calls). Keys live under
// "<namespace>/" in Consul's KV store ("/a/b" is stored as "<namespace>/a/b"); ephemeral keys are
// bound to one Consul session per repository instance (Behavior=delete, TTL-only, no health
// checks), created on the first ephemeral write and renewed at session_ttl / 2 by a background
// thread.
//
// Session loss (renew answers 404, or no renew succeeded for longer than session_ttl): the
// instance creates a new session, persists every ephemeral key it wrote again and tells the
// connection listeners (CONNECTED, SUSPENDED, LOST, RECONNECTED; see repository.h).
//
// Lock-delay: when a session dies, Consul refuses to bind the keys it held to any session for
// that session's lock-delay. Ephemeral writes that meet it retry every `lock_retry` for at most
// `session_lock_delay` plus two retries (instances sharing a namespace are expected to share this
// setting), so re-persisting after a session loss may take up to the lock-delay.
//
// Listeners: connection listeners (and the session observers and lock lost listeners of code
// built on it) run one at a time, in order, as tasks on the repository's serial executor (the task
// queue of a watch::Dispatcher, whose workers never renew the session nor do the watches' network
// I/O); data listeners run on the same workers, so a slow listener delays later connection
// notifications and lock lost listeners, not data listeners. A listener may call Close().
//
// Close(): a second call is a no-op returning OK. If the session cannot be destroyed (server
// unreachable), Close() still stops everything and returns the error; the keys then vanish when
// the session expires (at most 2 x session_ttl later). The repository must not be destroyed
// from inside one of its own listeners.
//
// Watches: one watch engine (watch/watch_engine.h) serves every data listener of the repository
// and the key watches of the locks built on it: one IO thread multiplexing one blocking query per
// registration (wait: block_query_wait), started by the first watch (a repository that never
// watches has none), and the executor's worker, whatever the number of listeners. A watch's id is
// the engine's. Close() stops the session keeper, then the engine, then the executor (running the
// tasks still queued).
//
// Threads: none until needed; with ephemeral keys, watches and locks, three (the session renewal
// thread, the IO thread and one worker, plus short-lived ones: see docs/architecture.md).
//
// Thread safety: the returned repository may be used from any number of threads.
#ifndef REPOSITORY_CONSUL_REPOSITORY_H_
#define REPOSITORY_CONSUL_REPOSITORY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/limits.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "registry/repository.h"
#include "repository/connection_publisher.h"
#include "repository/key_space.h"
#include "repository/remembered_keys.h"
#include "repository/session_keeper.h"
#include "watch/dispatcher.h"
#include "watch/watch_engine.h"

namespace registry {

struct ConsulRepositoryOptions {
  // Servers, ACL token, datacenter, TLS and request timeouts.
  consul::ClientOptions client;
  // Prefix of every key ("governance_ds"): non-empty, '/'-separated segments without empty,
  // "." or ".." parts, no control characters, no leading or trailing '/' or spaces.
  std::string namespace_name;
  // TTL of the instance session; positive and at most 24 h. Consul's server-side minimum
  // (session_ttl_min, 10 s by default) applies too.
  absl::Duration session_ttl = limits::kDefaultSessionTtl;
  // Lock-delay of the instance session: after it dies, its keys cannot be re-bound for this
  // long. Zero disables it; at most 60 s (Consul's cap).
  absl::Duration session_lock_delay = limits::kDefaultLockDelay;
  // The catalog node the instance sessions belong to, registered as an external node so that
  // no server's removal ends them (session_node.h); empty: the node of the agent that creates
  // them. Letters, digits, '-', '_', '.'.
  std::string session_node = std::string(limits::kDefaultSessionNode);
  // Server-side wait of blocking reads (watches, lock waits); positive, at most 10 min.
  absl::Duration block_query_wait = limits::kDefaultBlockQueryWait;
  // Pause between attempts refused by a lock-delay; positive, at most 60 s and the session TTL.
  absl::Duration lock_retry = limits::kDefaultLockRetry;
  // Operations per transaction the servers accept (PersistBatch puts one per key): 64 for
  // Consul up to 1.13, 128 later; from limits::kMinTxnOperations to kMaxTxnOperations.
  int txn_max_operations = limits::kDefaultTxnOperations;
  // Blocking queries one watch of a big tree may hold (WatchEngineOptions::max_queries_per_watch).
  int watch_max_connections = limits::kDefaultWatchQueries;
};

// Checks `options` without contacting any server. Errors: InvalidArgument naming the field.
absl::Status ValidateConsulRepositoryOptions(const ConsulRepositoryOptions& options);

// What a repository uses of its instance: parts the composition root (instance/instance.h)
// built. `owner` keeps them alive: the repository is the only object the middleware holds, so
// it releases them last, after its own state, when it is destroyed.
struct RepositoryParts {
  const ConsulRepositoryOptions& options;
  const KeySpace& key_space;
  consul::Client& client;
  consul::Canceller& closing;  // cancelled by Close(): passed to every request of the instance
  SessionKeeper& keeper;       // the instance session; binds the ephemeral keys
  RememberedKeys& keys;        // persistent writes go through it (they forget what they overwrite)
  ConnectionPublisher& connection;  // connection listeners subscribe here
  watch::WatchEngine& watches;
  // The serial executor (connection events), whose workers also run the engine's listeners.
  watch::Dispatcher& tasks;
  std::shared_ptr<void> owner;
};

// The Consul-backed Repository.
class ConsulRepository : public Repository {
 public:
  // The instance session the ephemeral keys are bound to now; "" while there is none (no
  // ephemeral write yet, or a lost one not yet replaced).
  virtual std::string CurrentSessionId() = 0;
};

// The repository over `parts`. Runs no thread and contacts no server. Close() stops the keeper,
// then the engine, then the executor (running the tasks still queued).
std::unique_ptr<ConsulRepository> NewConsulRepositoryOn(RepositoryParts parts);

}  // namespace registry

#endif  // REPOSITORY_CONSUL_REPOSITORY_H_
