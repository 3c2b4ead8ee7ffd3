// SPDX-License-Identifier: Apache-2.0
// watch/watch_engine.h
//
// WatchEngine keeps any number of watches on Consul KV subtrees and reports their changes as
// ADDED / UPDATED / DELETED events (registry/events.h).
//
//   ASSIGN_OR_RETURN(auto engine, WatchEngine::Create(client_options, {.block_query_wait = ...}));
//   ASSIGN_OR_RETURN(WatchId id, engine->Watch("ns/metadata", listener));
//   ...
//   engine->Remove(id);  // no callback of `id` after this returns
//   engine->Close();     // prompt, whatever the block-query wait
//
// How it works. Watch() lists the subtree once on the calling thread: that listing is the
// listener's starting view (reported as ADDED only with WatchOptions::replay_existing), so a
// change made after Watch() returns is always reported. From then on one IO thread runs one
// recursive blocking query per watch, all of them multiplexed on one libcurl multi handle
// (transfers set up by consul::CurlExchange), so the thread count does not depend on the number
// of watches. The loop is event-driven — curl_multi_socket_action with epoll, an eventfd as the
// wake-up — because curl_multi_perform + curl_multi_poll touch every parked transfer on each
// wake-up (measured: 57 ms per event with 10,000 watches, 0.5 ms now; see bench/README.md).
// Every answer is a complete listing of the subtree; it is diffed against the listener's view
// (watch/diff.h) and the difference is queued for the listener. Listeners run on a Dispatcher
// (watch/dispatcher.h, which explains the design): normally one worker thread, plus a temporary
// extra worker while a listener runs long and other watches wait, so the engine normally costs
// two background threads in total. Neither starts before it has work: the IO thread starts with
// the first watch, the worker with the first event. The dispatcher may be lent by the engine's
// owner (a repository runs its own ordered tasks on it), so that both share its worker.
//
// No lost final state. After any failure (connection refused or reset, timeout, 5xx, malformed
// answer) the watch backs off (exponential, jittered, from retry_min up to retry_max), re-lists
// the subtree with a consistent read and diffs it by content against the listener's view,
// emitting exactly the events that bring the listener to the server's state (a restarted, empty
// server yields one DELETED per key). An index that goes backwards (IndexTracker kReset: snapshot
// restore, tombstone reaping, a server restarted on its data) is not reported but re-listed the
// same way: a restarted server answers default reads from the state it is still rebuilding, and
// a consistent read only once it has caught up. A blocking query that would have to open
// a new connection re-lists instead (the server behind the address may have restarted and lost
// the index; a fresh server would park the query for the whole wait). As with any Consul client,
// an index reset that happens while no query of a watch is parked is noticed when that watch's
// wait ends: an answer after the whole wait is diffed by content even if its index is unchanged,
// and so is a listing in which a known key's index went down. An answer that returns early with an
// unchanged index, or an index reset, counts as suspicious and is followed by a back-off and a
// re-list, so a misbehaving server never makes the IO thread spin. Failover: every query goes to
// the client's preferred server, and a failed one is avoided (consul::ClientExchanges, which also
// applies the client's options, records the metrics and reports each outcome's reachability).
//
// Order: events for one key are delivered in the order the server applied the changes (rapid
// writes may be coalesced); one watch's listener is never called concurrently with itself and
// never on the IO thread; an exception thrown by a listener is caught and logged, and the watch
// goes on. The first failure of a streak and the recovery are logged to stderr (no token).
//
// Split watches. A subtree watch whose listing holds more than split_threshold keys splits into
// blocking queries on parts of the tree (watch/split_plan.h): below the first folder with more
// than one name, its names are grouped by string prefix, one recursive query per group, plus a
// `?keys&separator=/` guard on each folder from the root down that notices a name outside every
// group. A change then re-reads its group only (~100 keys instead of the tree). Every key is
// read by exactly one query, so per-key order holds; any failure or odd answer of one query
// ends the split, and the watch backs off and re-lists as above; a new name outside the plan,
// or a group that became empty, re-lists at once; a re-listed big tree is planned again. The
// cost: up to max_queries_per_watch connections for the watch, and the server lists the whole
// folder under a guard to answer it (a few names). So a guard that answered a change waits
// split_guard_pause before it asks again: a burst of writes costs the server one guard listing
// per pause, not one per write, and a name outside the plan is noticed up to that much later.
//
// Key watches. WatchKey() follows one key rather than a subtree, for code that needs more of the
// entry than events carry (a lock monitor needs the session holding the key): its observer gets
// the key's whole entry. It shares the IO thread, the back-off, the failover and the listener
// workers with the subtree watches, and it may start later than it is registered (a lock held
// for less than the delay never costs a query).
//
// Thread safety: all methods may be called concurrently from any thread, including from inside
// a listener (see Remove() and Close() for what that means).
#ifndef WATCH_WATCH_ENGINE_H_
#define WATCH_WATCH_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/limits.h"
#include "consul/client.h"
#include "consul/client_options.h"
#include "consul/kv.h"
#include "registry/events.h"
#include "watch/diff.h"
#include "watch/dispatcher.h"
#include "watch/key_watcher.h"

namespace registry::watch {

namespace internal {
class IoLoop;
}  // namespace internal

struct WatchEngineOptions {
  // Server-side wait of each blocking query (sent in milliseconds); positive, at most 10 min.
  absl::Duration block_query_wait = limits::kDefaultBlockQueryWait;
  // Back-off after a failure or a suspicious answer: starts at retry_min, doubles up to
  // retry_max, each delay drawn uniformly from [d/2, d]; reset by the first good answer.
  absl::Duration retry_min = absl::Milliseconds(50);
  absl::Duration retry_max = absl::Seconds(5);
  // Consul key -> key carried by events (e.g. KeySpace::RepositoryKey); null keeps Consul keys.
  // Called on the IO thread and in Watch(); must be thread-safe and quick.
  KeyMapper key_mapper;
  // How listeners are run (worker count, stall threshold).
  DispatcherOptions dispatcher;
  // Big trees (see "Split watches" above). A subtree watch whose listing holds more than
  // split_threshold keys splits into at most max_queries_per_watch blocking queries (so as many
  // connections): one per group of folders, plus guards that notice new folders. 1 never splits.
  size_t split_threshold = 1024;
  int max_queries_per_watch = limits::kDefaultWatchQueries;
  absl::Duration split_guard_pause = absl::Milliseconds(50);  // zero: ask again at once
};

struct WatchOptions {
  // Report every key that exists when the watch starts as ADDED before any other event. By
  // default the existing state is the silent starting point (ShardingSphere semantics).
  bool replay_existing = false;
};

class WatchEngine final : public KeyWatcher {
 public:
  // An engine with its own client for `client_options` and its own dispatcher. Starts no thread
  // and contacts no server. Errors: InvalidArgument for bad options (naming the field).
  static absl::StatusOr<std::unique_ptr<WatchEngine>> Create(consul::ClientOptions client_options,
                                                             WatchEngineOptions options);
  // An engine sharing `client` (its options, preferred server and failover state) and, when not
  // null, running its listeners on `listeners` (options.dispatcher is then unused; the engine is
  // its supervisor, see Dispatcher::SetSupervisor). Both must outlive the engine.
  static absl::StatusOr<std::unique_ptr<WatchEngine>> Create(consul::Client* client,
                                                             WatchEngineOptions options,
                                                             Dispatcher* listeners = nullptr);

  // Close()s. Must not run inside one of this engine's listeners.
  ~WatchEngine() override;
  WatchEngine(const WatchEngine&) = delete;
  WatchEngine& operator=(const WatchEngine&) = delete;

  // Watches `consul_key` and every key below it ("ns/a" covers "ns/a" and "ns/a/...", never
  // "ns/ab"; "" or a key ending with '/' is a pure prefix). Lists the subtree once before
  // returning: every change applied after this returns is reported to `listener`, and the state
  // listed is reported as ADDED events only with options.replay_existing. Errors:
  // InvalidArgument for a malformed key; FailedPrecondition after Close(); the listing's error
  // (Unavailable, PermissionDenied, Cancelled by Close(), ...) naming the key. Nothing is
  // registered on error.
  absl::StatusOr<WatchId> Watch(std::string consul_key, DataChangedListener listener,
                                WatchOptions options = {});

  // Follows the single key `consul_key` (no subtree). From options.start_at on, `observer` is
  // called with the key's state after the first read and after every change of it (a new
  // ModifyIndex, its creation or its deletion; rapid changes may be coalesced, the last state is
  // never lost), under the same rules as listeners: on a listener worker, never concurrently with
  // itself. Failed reads are retried with back-off and never reported. Contacts no server before
  // returning. Errors: InvalidArgument for an empty key or no observer; FailedPrecondition after
  // Close(). Remove() ends it.
  absl::StatusOr<WatchId> WatchKey(std::string consul_key, KeyObserver observer,
                                   KeyWatchOptions options) override;

  // Stops watch `id` and aborts its in-flight query. When it returns, the listener is not
  // running and will never be called again — except when called from inside that same
  // listener: then it returns at once and the listener is not called again once the current
  // call returns. Called from another watch's listener it waits for `id`'s current call (so two
  // listeners must not remove each other at the same moment). Unknown ids are ignored.
  void Remove(WatchId id) override;

  // Stops every watch: aborts all queries (not waiting for any blocking wait), drops pending
  // events, joins the IO thread and, once running listener calls return, the listener workers
  // (a lent dispatcher is not stopped: the engine's watches leave it, and its tasks go on), and
  // makes later Watch() calls fail. Prompt (milliseconds plus running listener calls). Called
  // from inside a listener it does not wait for that call; the destructor joins its worker.
  // Idempotent; a call while another Close() runs returns at once.
  void Close();

  // Background threads now running (the IO thread plus the workers of the engine's own
  // dispatcher, not of a lent one); 0 after Close().
  size_t background_threads() const;
  // Watches registered and not removed.
  size_t watch_count() const;

 private:
  WatchEngine(std::unique_ptr<consul::Client> owned_client, consul::Client* client,
              WatchEngineOptions options, Dispatcher* listeners);
  const WatchEngineOptions options_;
  std::unique_ptr<consul::Client> owned_client_;  // null when the client is borrowed
  consul::Client* const client_;
  std::unique_ptr<internal::IoLoop> io_;  // owns the IO thread and the dispatcher
};

// Checks `options`. Errors: InvalidArgument naming the field and its value.
absl::Status ValidateWatchEngineOptions(const WatchEngineOptions& options);

}  // namespace registry::watch

#endif  // WATCH_WATCH_ENGINE_H_
