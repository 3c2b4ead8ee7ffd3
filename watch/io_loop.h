// SPDX-License-Identifier: Apache-2.0
// watch/io_loop.h
//
// Internal to the watch engine (see watch_engine.h for the behaviour it implements): the IO
// thread that multiplexes every watch's blocking queries on one libcurl multi handle, and the
// bookkeeping shared with the threads calling Watch()/Remove()/Close().
//
// What a watch's queries do is decided by the query machine (query_machine.h), a pure
// transition function of the watch's state: this loop only feeds it what happened (an answer, a
// timer, a request that could not start) and performs the actions it returns (send a request,
// set a timer, open or close a split's transfers, queue events for the listener, log).
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
#include "consul/client_exchanges.h"
#include "consul/curl_exchange.h"
#include "consul/kv.h"
#include "watch/dispatcher.h"
#include "watch/query_machine.h"
#include "watch/socket_ledger.h"
#include "watch/watch_engine.h"

namespace registry::watch::internal {

class IoLoop {
 public:
  // `client`, and `listeners` when not null, must outlive the loop; a null `listeners` makes the
  // loop run listeners on a dispatcher of its own.
  IoLoop(consul::Client* client, WatchEngineOptions options, Dispatcher* listeners);
  // Close()s, then frees the multi handle. Must not run inside a listener.
  ~IoLoop();
  IoLoop(const IoLoop&) = delete;
  IoLoop& operator=(const IoLoop&) = delete;

  // Creates the multi handle and becomes the dispatcher's supervisor; starts no thread (the IO
  // thread starts with the first watch). Call once. Errors: ResourceExhausted if libcurl cannot
  // allocate.
  absl::Status Start();

  // As WatchEngine::Watch / WatchKey / Remove / Close / background_threads / watch_count.
  absl::StatusOr<WatchId> Watch(std::string consul_key, DataChangedListener listener,
                                WatchOptions options);
  absl::StatusOr<WatchId> WatchKey(std::string consul_key, KeyObserver observer,
                                   KeyWatchOptions options);
  void Remove(WatchId id);
  void Close();
  size_t background_threads() const;
  size_t watch_count() const;

 private:
  // A query's libcurl transfer (the watch's own query's, or a probe's): one easy handle, reused
  // by every request of that query. IO thread only once handed over.
  struct WatchEntry;
  struct Transfer {
    Transfer(IoLoop* loop, WatchEntry* watch, QueryIndex query)
        : loop(loop), watch(watch), query(query) {}
    ~Transfer();  // frees the easy handle; it must no longer be in the multi handle
    Transfer(const Transfer&) = delete;
    Transfer& operator=(const Transfer&) = delete;

    IoLoop* const loop;
    WatchEntry* const watch;
    const QueryIndex query;
    CURL* easy = nullptr;
    std::unique_ptr<consul::CurlExchange> exchange;  // non-null while a request is in flight
    bool refused_new_connection = false;             // set by OpenSocket for the request in flight
  };
  // One watch: its machine state (query_machine.h) and its transfers.
  struct WatchEntry {
    WatchEntry(IoLoop* loop, WatchState initial);
    ~WatchEntry();
    WatchId id = 0;  // set by Register()
    WatchState state;
    std::shared_ptr<const KeyObserver> observer;  // a key watch's
    Transfer own;
    std::vector<std::unique_ptr<Transfer>> probes;  // while split: the transfer of probe i
    bool counted_active = false;  // in registry_consul_watches_active (set by Register)
  };

  // CURLOPT_OPENSOCKETFUNCTION of every transfer (`data` is its Transfer).
  static curl_socket_t OpenSocket(void* data, curlsocktype purpose, curl_sockaddr* address);
  // CURLOPT_CLOSESOCKETFUNCTION of every transfer (`data` is the loop): the ledger forgets the
  // socket before its descriptor is released.
  static int CloseSocket(void* data, curl_socket_t socket);

  // libcurl's socket and timer callbacks (CURLMOPT_SOCKETFUNCTION / TIMERFUNCTION); `data` is
  // the loop. They run on the IO thread, inside libcurl calls.
  static int OnSocket(CURL* easy, curl_socket_t socket, int what, void* data, void* assigned);
  static int OnTimer(CURLM* multi, long timeout_ms, void* data);

  // Wakes the IO thread (from any thread).
  void Wake();
  // The IO thread: takes commands, fires due timers, lets libcurl work on ready sockets and
  // timeouts, and sleeps in epoll_wait until the next of those.
  void Run();
  // Starts the watches added and drops those removed since the last call; false once closed.
  bool TakeCommands();
  void FireDueTimers(absl::Time now);
  // A ready descriptor: the wake-up eventfd, or a socket handed to libcurl.
  void OnReady(const epoll_event& event);
  // Drops every watch at close (see io_loop.cc for the order).
  void DropAllOldestConnectionFirst();
  // Hands a new watch to the IO thread; FailedPrecondition (naming the key) once closed.
  absl::StatusOr<WatchId> Register(std::unique_ptr<WatchEntry> watch, DataChangedListener listener,
                                   std::vector<DataChangedEvent> replay);

  // io_loop_transfers.cc: the machine's inputs and the actions it returns.
  // Hands every transfer libcurl reports finished to Complete().
  void CompleteFinished();
  // A finished transfer: its answer (or failure) goes to the machine.
  void Complete(Transfer* transfer, CURLcode result, absl::Time now);
  // Feeds `input` (of time `now`) to `watch`'s machine and performs the actions it returns, in
  // order; `server`: the server the input came from (AvoidServer).
  void Step(WatchEntry* watch, const QueryInput& input, absl::Time now,
            const std::string& server = "");
  // Starts a request; false when it could not start (NotSent was fed back).
  bool StartRequest(WatchEntry* watch, const Send& send, absl::Time now);
  // Makes the probes' transfers; false when impossible (ProbesRefused was fed back).
  bool OpenProbeTransfers(WatchEntry* watch, size_t count, absl::Time now);
  // Aborts the probes' requests; their transfers are freed once no finished transfer being
  // handled can refer to them.
  void CloseProbeTransfers(WatchEntry* watch);
  // Aborts the request of `transfer` (if any) and takes it out of the multi handle.
  void Drop(Transfer* transfer);
  void DropWatch(WatchEntry* watch);

  const WatchEngineOptions options_;
  const QueryRules rules_;  // from options_; its back-offs draw from rng_ (IO thread only)
  const consul::ClientExchanges exchanges_;  // all it uses of the client
  consul::Canceller canceller_;  // cancelled by Close(): aborts listings made by Watch()
  CURLM* multi_ = nullptr;       // created by Start(), freed by the destructor
  int epoll_fd_ = -1;            // the sockets libcurl asks to watch, plus wake_fd_
  int wake_fd_ = -1;             // eventfd written by Wake()
  std::unique_ptr<Dispatcher> owned_dispatcher_;  // null when lent; reset by the destructor only
  Dispatcher* const dispatcher_;                  // runs the listeners; never null before then
  std::thread thread_;  // the IO thread, started by the first Register(); joined by Close()

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool io_running_ ABSL_GUARDED_BY(mu_) = false;
  WatchId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_set<WatchId> live_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<WatchEntry>> adds_ ABSL_GUARDED_BY(mu_);
  std::vector<WatchId> removes_ ABSL_GUARDED_BY(mu_);

  // IO thread only.
  absl::BitGen rng_;                                   // the back-offs' jitter (rules_)
  absl::Time curl_deadline_ = absl::InfiniteFuture();  // libcurl's next timeout (OnTimer)
  // The sockets opened for queries and their creation order (socket_ledger.h): which epoll
  // registrations are still theirs, and the order to close connections in, oldest first.
  SocketLedger sockets_;
  using Timer = std::pair<absl::Time, WatchId>;
  absl::flat_hash_map<WatchId, std::unique_ptr<WatchEntry>> watches_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;  // lazy: stale
                                                                                // entries skipped
  // Transfers of ended splits: a finished transfer being handled may still name their handles,
  // so they are freed at the end of CompleteFinished().
  std::vector<std::unique_ptr<Transfer>> retired_;
};

}  // namespace registry::watch::internal

#endif  // WATCH_IO_LOOP_H_
