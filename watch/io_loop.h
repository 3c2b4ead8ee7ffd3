// watch/io_loop.h
//
// Internal to the watch engine (see watch_engine.h for the behaviour it implements): the IO
// thread that multiplexes every watch's blocking query on one libcurl multi handle, and the
// bookkeeping shared with the threads calling Watch()/Remove()/Close().
//
// Event loop: libcurl's multi-socket API (curl_multi_socket_action) driven by epoll, so a
// wake-up costs work for the sockets that are ready only, not for every parked query (with
// curl_multi_perform + curl_multi_poll each wake-up tried a read on every transfer: ~57 ms per
// event with 10,000 parked watches). An eventfd plays the part of curl_multi_wakeup().
//
// Threads: callers hand new and removed watches over through `mu_` and wake the IO thread
// through the eventfd; everything under "IO thread only" is touched by the IO thread alone
// (before it starts and after it is joined, by nobody). Listeners run on `dispatcher_`.
//
// Thread safety: public methods may be called concurrently from any thread.
#ifndef WATCH_IO_LOOP_H_
#define WATCH_IO_LOOP_H_

#include <curl/curl.h>
#include <sys/epoll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "consul/curl_exchange.h"
#include "consul/kv.h"
#include "watch/diff.h"
#include "watch/dispatcher.h"
#include "watch/split_plan.h"
#include "watch/watch_engine.h"

namespace registry::watch::internal {

class IoLoop {
 public:
  // `client` must outlive the loop.
  IoLoop(consul::Client* client, WatchEngineOptions options);
  // Close()s, then frees the multi handle. Must not run inside a listener.
  ~IoLoop();
  IoLoop(const IoLoop&) = delete;
  IoLoop& operator=(const IoLoop&) = delete;

  // Creates the multi handle and starts the IO thread and the dispatcher. Call once.
  // Errors: ResourceExhausted if libcurl cannot allocate.
  absl::Status Start();

  // As WatchEngine::Watch / WatchKey / Post / Remove / Close / background_threads /
  // watch_count.
  absl::StatusOr<WatchId> Watch(std::string consul_key, DataChangedListener listener,
                                WatchOptions options);
  absl::StatusOr<WatchId> WatchKey(std::string consul_key, KeyObserver observer,
                                   KeyWatchOptions options);
  bool Post(std::function<void()> task);
  bool InTask() const;
  void Remove(WatchId id);
  void Close();
  size_t background_threads() const;
  size_t watch_count() const;

 private:
  // One watch's query state. IO thread only once handed over.
  struct Query {
    Query(IoLoop* loop, WatchScope scope);
    ~Query();  // frees the easy handle; it must no longer be in the multi handle

    IoLoop* const loop;
    WatchId id = 0;  // set by Register()
    const WatchScope scope;
    // Non-null for a key watch (WatchKey): it reads scope.consul_key() alone, and reports states
    // instead of diffing listings.
    std::shared_ptr<const KeyObserver> observer;
    std::optional<consul::DirEntry> key_state;  // a key watch's last reported state
    bool key_state_reported = false;
    absl::Time start_at = absl::InfinitePast();      // no query before this
    CURL* easy = nullptr;                            // reused by every query of this watch
    std::unique_ptr<consul::CurlExchange> exchange;  // non-null while a query is in flight
    consul::IndexTracker tracker;
    Snapshot snapshot;                // what the listener has been told
    bool resync = false;              // next query is a plain re-list, diffed by content
    int backoff_steps = 0;            // back-offs in a row (base/backoff.h); 0: none
    bool backoff_suspicious = false;  // the last back-off followed an odd answer, not a failure
    int failures = 0;                 // consecutive failures (for logging)
    absl::Time sent_at = absl::InfinitePast();
    uint64_t sent_index = 0;
    // A blocking query may open a new connection only when its index comes from a server
    // reached moments ago (the starting listing or a re-list). Otherwise the connection it held
    // is gone — the server may have restarted and lost the index — so the attempt is refused
    // (libcurl would silently resend it, and a fresh server would park it for the whole wait)
    // and the watch re-lists instead.
    bool trust_new_connection = true;
    bool refused_new_connection = false;           // set by OpenSocket for the transfer in flight
    absl::Time retry_at = absl::InfiniteFuture();  // when a back-off or a pause ends (no query)
    bool counted_active = false;  // in registry_consul_watches_active (set by Register)
    // Split watches (io_loop_split.cc). A watch's query is idle while `probes` run; each probe is
    // a Query with `watch` set and its own transfer, index and `scope` (the part it reads),
    // sharing the watch's id, snapshot, back-off and listener. A probe never backs off itself:
    // any trouble ends the split and the watch re-lists (`replan`) or backs off.
    Query* watch = nullptr;                      // a probe's watch; null for a watch
    std::optional<Probe> probe;                  // what a probe reads
    std::optional<SplitPlan> plan;               // a watch's plan: set while split, or pending
    std::vector<std::unique_ptr<Query>> probes;  // a watch's probes while split
    bool replan = false;  // next query is a plain re-list diffed by index, then a new plan
    // Keys in the view when PlanSplit last declined this watch (0: not declined since the last
    // re-list). Planning again costs a second parse of the listing, so a tree that cannot be
    // split (a flat prefix) is planned again only once it grew by a quarter, or re-listed.
    size_t declined_at = 0;
  };

  // CURLOPT_OPENSOCKETFUNCTION of every query (`data` is its Query).
  static curl_socket_t OpenSocket(void* data, curlsocktype purpose, curl_sockaddr* address);

  // libcurl's socket and timer callbacks (CURLMOPT_SOCKETFUNCTION / TIMERFUNCTION); `data` is
  // the loop. They run on the IO thread, inside libcurl calls.
  static int OnSocket(CURL* easy, curl_socket_t socket, int what, void* data, void* assigned);
  static int OnTimer(CURLM* multi, long timeout_ms, void* data);

  // Wakes the IO thread (from any thread).
  void Wake();
  // The IO thread: takes commands, starts queries whose back-off ended, lets libcurl work on
  // ready sockets and timeouts, and sleeps in epoll_wait until the next of those.
  void Run();
  // Starts the watches added and drops those removed since the last call; false once closed.
  bool TakeCommands();
  void FireDueTimers(absl::Time now);
  // The query of `watch` (itself or one of its probes) whose pause ends at `at` and that is still
  // waiting for it; null if none (a stale timer).
  Query* DueAt(Query* watch, absl::Time at);
  // A ready descriptor: the wake-up eventfd, or a socket handed to libcurl.
  void OnReady(const epoll_event& event);
  // Drops every query at close (see io_loop.cc for the order).
  void DropAllOldestConnectionFirst();
  // Hands every transfer libcurl reports finished to Complete().
  void CompleteFinished();
  void StartQuery(Query* query, absl::Time now);
  // The request of `query`'s next transfer: a key watch's or key probe's read, a guard's names,
  // or a recursive listing.
  static absl::StatusOr<consul::HttpRequest> BuildRequest(const Query& query,
                                                          const consul::QueryOptions& options);
  // Hands a new watch's query to the IO thread; FailedPrecondition (naming the key) once closed.
  absl::StatusOr<WatchId> Register(std::unique_ptr<Query> query, DataChangedListener listener,
                                   std::vector<DataChangedEvent> replay);
  // io_loop_answers.cc: a finished transfer, a usable answer (`index` from its headers), the
  // diff of its listing against what the listener was told (queued for the listener), a key
  // watch's new state (queued for its observer).
  void Complete(Query* query, CURLcode result, absl::Time now);
  void Apply(Query* query, const consul::HttpRequest& request, const consul::HttpResponse& response,
             uint64_t index, absl::Time now);
  absl::Status DeliverDiff(Query* query, const consul::HttpRequest& request,
                           const consul::HttpResponse& response, CompareBy compare);
  absl::StatusOr<DiffResult> Diff(Snapshot* previous, const WatchScope& scope,
                                  const consul::HttpRequest& request,
                                  const consul::HttpResponse& response, CompareBy compare);
  absl::Status DeliverKeyState(Query* query, const consul::HttpRequest& request,
                               const consul::HttpResponse& response);
  void Fail(Query* query, const absl::Status& status, const std::string& server, absl::Time now);
  // Schedules a plain re-list after the next back-off step. `suspicious`: caused by an odd
  // answer rather than a failure.
  void BackOff(Query* query, absl::Time now, bool suspicious);
  void Drop(Query* query);

  // io_loop_split.cc.
  SplitLimits split_limits() const {
    return SplitLimits{options_.split_threshold, options_.max_queries_per_watch};
  }
  static Query* WatchOf(Query* query) { return query->watch != nullptr ? query->watch : query; }
  // Whether a listing of `keys` keys is worth a PlanSplit for a watch that was last declined at
  // `declined_at` keys (0: not declined since its last re-list): it is big, the budget allows a
  // split, and it grew by a quarter since it was declined (each plan parses the listing again).
  bool WorthPlanning(size_t keys, size_t declined_at) const;
  // After a watch's listing: splits it when big (PlanSplit), else starts its next query.
  void StartOrSplit(Query* watch, const consul::HttpResponse& listing, absl::Time now);
  // Starts one probe per entry of watch->plan.
  void StartProbes(Query* watch, absl::Time now);
  // Stops a split watch's probes (they are freed once no finished transfer refers to them).
  void Unsplit(Query* watch);
  // Ends the split and re-lists the whole watch at once: a name no probe covers appeared, or a
  // probe's part became empty.
  void Replan(Query* watch, absl::Time now);
  void ApplyProbe(Query* probe, const consul::HttpRequest& request,
                  const consul::HttpResponse& response, uint64_t index, absl::Time now);
  // Whether the plan still holds after a guard's answer: false when a name no probe covers
  // appeared or the folder is gone.
  absl::StatusOr<bool> GuardHolds(Query* guard, const consul::HttpRequest& request,
                                  const consul::HttpResponse& response);
  // Diffs a tree or key probe's answer against its part of the watch's snapshot (by `compare`)
  // and queues the events; false when the part is empty now (the plan no longer holds).
  absl::StatusOr<bool> DeliverPart(Query* probe, const consul::HttpRequest& request,
                                   const consul::HttpResponse& response, CompareBy compare);

  const WatchEngineOptions options_;
  consul::Client* const client_;
  const consul::CurlOptions curl_options_;
  consul::Canceller canceller_;  // cancelled by Close(): aborts listings made by Watch()
  CURLM* multi_ = nullptr;       // created by Start(), freed by the destructor
  int epoll_fd_ = -1;            // the sockets libcurl asks to watch, plus wake_fd_
  int wake_fd_ = -1;             // eventfd written by Wake()
  std::unique_ptr<Dispatcher> dispatcher_;
  std::thread thread_;  // the IO thread; joined by Close()

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool io_running_ ABSL_GUARDED_BY(mu_) = false;
  WatchId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_set<WatchId> live_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Query>> adds_ ABSL_GUARDED_BY(mu_);
  std::vector<WatchId> removes_ ABSL_GUARDED_BY(mu_);

  // IO thread only.
  absl::Time curl_deadline_ = absl::InfiniteFuture();  // libcurl's next timeout (OnTimer)
  // Creation order of the sockets opened for queries (by descriptor; a reused descriptor gets a
  // new number), to close connections oldest first.
  absl::flat_hash_map<curl_socket_t, uint64_t> socket_serial_;
  uint64_t socket_count_ = 0;
  using Timer = std::pair<absl::Time, WatchId>;
  absl::flat_hash_map<WatchId, std::unique_ptr<Query>> queries_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;  // lazy: stale
                                                                                // entries skipped
  absl::BitGen rng_;
  // Probes of ended splits: a finished transfer being handled may still name their handles, so
  // they are freed at the end of CompleteFinished().
  std::vector<std::unique_ptr<Query>> retired_;
};

}  // namespace registry::watch::internal

#endif  // WATCH_IO_LOOP_H_
