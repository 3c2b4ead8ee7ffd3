// SPDX-License-Identifier: Apache-2.0
// watch/query_machine.h
//
// What a watch's blocking queries do, as plain values and one pure transition function, like
// diff.h: a watch's state (what was asked, what came back, what to do next) and
// Transition(rules, state, input) -> actions. IoLoop (io_loop.h) drives it: it performs the
// actions with libcurl and epoll and feeds back what happened. No I/O, no clock (times come
// with the inputs), no threads; the one random input, the jitter of a back-off, is drawn by
// QueryRules::backoff_delay. tests/watch/query_machine_test.cc drives every rule below.
//
// Roles. A watch is a tree watch (WatchEngine::Watch: lists its subtree and diffs each listing
// into events) or a key watch (WatchKey: reads one key and reports each new state of it). A
// tree watch over a big tree may be split (split_plan.h): its own query idles while probes,
// each a query with its own index, read the parts of the tree (tree and key probes) and the
// names below its folders (guards).
//
// The states of a watch, and of its queries (QueryState::Phase):
//
//   WAITING TO START  the own query kWaiting (a key watch whose start_at is later)
//   ONE QUERY         the own query kSent, reading as NextRead says
//   BACKING OFF       the own query kWaiting; the next read is kRelist
//   SPLIT             the own query kIdle; each probe kSent, or kWaiting (a guard's pause)
//
//               Started                             a big listing (8)
//    new ----------------------------> ONE QUERY ---------------------------> SPLIT
//     |                                 ^ ^ |  ^                               |  |
//     | start_at later       TimerFired | | |  +--- kReplan: a name no probe --+  |
//     v                                 | | |       covers, a part emptied (9);   |
//    WAITING TO START ------------------+ | |       kRelist: a refused            |
//                                         | |       connection (7)                |
//                 TimerFired: kRelist (5) | | a failure, an odd answer          |
//                                         | v (1, 2, 4)                         |
//                                       BACKING OFF <---------------------------+
//                                                    a failure, an odd answer (9)
//
// In ONE QUERY each answer leads to the next read (3-6, 11); in SPLIT each probe's answer to its
// next read, or to a guard's pause (10). NextRead: the own query blocks on the index of the last
// answer (kBlocking), or reads anew with index 0 after a back-off or a refused connection
// (kRelist, diffed by content), or for a new plan (kReplan, diffed by index, then planned).
//
// Convergence rules (each pinned by an integration test in integration/watch and unit-tested):
//  1. A usable answer found the key or prefix, or found nothing there (an empty subtree, an
//     absent key; consul::ParseKvReadAnswer). Anything else, or no answer at all, is a failure:
//     the watch backs off (jittered, doubling) and then re-lists. A transient failure
//     (consul::IsTransient: no answer, no leader, a server error, a timeout, a malformed
//     answer) also makes the client avoid that server.
//  2. An early answer (before half the wait) with the index unchanged is suspicious: the watch
//     backs off and re-lists, instead of spinning.
//  3. An answer after the whole wait with the index unchanged is still diffed by content, once
//     per wait: an index reset that landed on this very index unseen changes content only.
//  4. An index that went backwards (a reset: snapshot restore, a restarted server) is not
//     reported: a server restarted on its data answers from the state it is still rebuilding,
//     older than what the watch reported. The watch re-lists at once (early, after a back-off).
//  5. A re-list (index 0) is a consistent read: the server answers it once it is ready to serve,
//     from its whole log. It is diffed by content, counted as a re-list, and its index starts a
//     new history.
//  6. A back-off run ends with a proper blocking answer; a re-list ends a run of failures (the
//     server answers again) but not one of suspicious answers (they may come back).
//  7. A blocking query may open a new connection only with an index from a plain read moments
//     ago; otherwise its connection is gone (the server may have restarted and lost the index)
//     and the watch re-lists at once on a new one, without a back-off.
//  8. A tree watch splits after a listing (found) of more than the threshold keys when the
//     budget allows; a tree PlanSplit declined is planned again only once it grew by a quarter,
//     or after a re-list. Probes start at the index of the keys they read.
//  9. While split, any failure or odd answer of a probe ends the split and backs the watch off
//     (rules 1, 2, 4); a name no probe covers, a folder gone or a tree probe's part emptied ends
//     it too, and the watch re-lists at once for a new plan (kReplan).
// 10. A guard that answered a change pauses (split_guard_pause) before it asks again, and may
//     then open a new connection; a proper probe answer ends the watch's back-off run.
// 11. A key watch reports a state when the whole entry differs from the last one reported.
//
// Thread safety: plain values and pure functions (QueryRules::backoff_delay and key_mapper are
// called by Transition).
#ifndef WATCH_QUERY_MACHINE_H_
#define WATCH_QUERY_MACHINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/log.h"
#include "consul/http_types.h"
#include "consul/kv.h"
#include "consul/query.h"
#include "registry/events.h"
#include "watch/diff.h"
#include "watch/split_plan.h"

namespace registry::watch {

// What the machine needs of WatchEngineOptions.
struct QueryRules {
  absl::Duration block_query_wait = absl::Minutes(1);
  absl::Duration split_guard_pause = absl::ZeroDuration();
  SplitLimits split;
  KeyMapper key_mapper;
  // The delay of the n-th back-off in a row (n >= 1): BackoffDelay (base/backoff.h) in the
  // engine, anything deterministic in tests.
  std::function<absl::Duration(int backoffs_in_a_row)> backoff_delay;
};

// Which query of a watch: its own, or probe i of its split (SplitState::probes[i]).
using QueryIndex = int;
inline constexpr QueryIndex kOwnQuery = -1;

// One blocking query: what was asked and where it stands.
struct QueryState {
  enum class Phase {
    kIdle,     // nothing in flight, nothing awaited
    kSent,     // a request is in flight
    kWaiting,  // sends once `wait_until` has come (a back-off, a pause, a delayed start)
  };
  Phase phase = Phase::kIdle;
  consul::IndexTracker tracker;  // the index of the answers so far
  uint64_t sent_index = 0;       // the index sent with the last request (0: a plain read)
  absl::Time sent_at = absl::InfinitePast();
  absl::Time wait_until = absl::InfiniteFuture();
  // Whether the index of the next blocking request comes from a server reached moments ago,
  // so that it may open a new connection (rule 7).
  bool fresh_index = true;
};

// A probe of a split watch: the part it reads, and its query.
struct ProbeState {
  Probe probe;
  WatchScope scope;  // the keys it reads
  QueryState query;
};

struct SplitState {
  SplitPlan plan;
  std::vector<ProbeState> probes;  // empty while the plan waits for Started
};

struct TreeWatch {
  Snapshot snapshot;                // what the listener has been told
  std::optional<SplitState> split;  // set while split
  // Keys in the view when PlanSplit last declined the watch (0: not since its last re-list).
  size_t declined_at = 0;
};

struct KeyWatch {
  absl::Time start_at = absl::InfinitePast();  // no read before
  // The state last reported (nullopt inside: the key was absent); nullopt: none reported yet.
  std::optional<std::optional<consul::DirEntry>> reported;
};

enum class NextRead {
  kBlocking,  // on the index of the last answer
  kRelist,    // a consistent read, diffed by content, after a back-off, a reset or a refused
              // connection
  kReplan,    // a plain read, diffed by index, then a new plan
};

struct WatchState {
  explicit WatchState(WatchScope watched) : scope(std::move(watched)) {}

  WatchScope scope;
  QueryState own;
  NextRead next = NextRead::kBlocking;
  int backoffs = 0;                 // back-offs in a row (base/backoff.h); 0: none
  bool backoff_suspicious = false;  // the last back-off followed an odd answer, not a failure
  int failures = 0;                 // failures in a row (logged at the first and at recovery)
  std::variant<TreeWatch, KeyWatch> role;
};

// A tree watch starting from `listing`, its first listing (made by Watch() before it returns),
// with a plan if the tree is worth splitting. `*replay` receives the listing as ADDED events.
WatchState NewTreeWatch(const QueryRules& rules, WatchScope scope, consul::KvListResult listing,
                        std::vector<DataChangedEvent>* replay);
// A key watch that reads nothing before `start_at`.
WatchState NewKeyWatch(WatchScope scope, absl::Time start_at);

// ---- Inputs: what happened to the watch.

// The IO thread took the watch over.
struct Started {
  absl::Time now;
};
// A request of the watch came back. `meta`: the answer's query metadata if it is usable
// (consul::ParseKvReadAnswer), else the failure (transport error, cancellation, an HTTP error
// as consul/errors.h maps it); `response` is non-null when `meta` is ok.
struct Answered {
  QueryIndex query = kOwnQuery;
  absl::Time now;
  const consul::HttpRequest* request = nullptr;  // names the query in errors
  absl::StatusOr<consul::QueryMeta> meta;
  const consul::HttpResponse* response = nullptr;
};
// The transfer of a request needed a new connection, which MayOpenConnection() refused.
struct ConnectionRefused {
  absl::Time now;
};
// A Send could not start (a malformed request, no transfer).
struct NotSent {
  absl::Status status;
  absl::Time now;
};
// The timer of a Wait action came: `at` is its time.
struct TimerFired {
  absl::Time at;
  absl::Time now;
};
// The transfers of OpenProbes could not be made.
struct ProbesRefused {
  absl::Time now;
};
using QueryInput =
    std::variant<Started, Answered, ConnectionRefused, NotSent, TimerFired, ProbesRefused>;

// ---- Actions: what the driver does, in order. Sends come last: when one fails, the driver
// feeds NotSent back and skips the rest.

enum class ReadKind {
  kList,   // a recursive listing of `key` (a tree watch, a tree probe)
  kGet,    // the single key `key` (a key watch, a key probe)
  kNames,  // the names one level below folder `key` (a guard)
};
// Start a request of query `query` (on its connection), blocking on `index` (0: a plain read).
struct Send {
  QueryIndex query = kOwnQuery;
  ReadKind read = ReadKind::kList;
  std::string key;
  uint64_t index = 0;
  friend bool operator==(const Send&, const Send&) = default;
};
// Call back with TimerFired{until} at `until` (query `query` waits for it).
struct Wait {
  QueryIndex query = kOwnQuery;
  absl::Time until;
  friend bool operator==(const Wait&, const Wait&) = default;
};
// Make the transfers of probes 0..count-1 (their Sends follow); ProbesRefused if impossible.
struct OpenProbes {
  size_t count = 0;
  friend bool operator==(const OpenProbes&, const OpenProbes&) = default;
};
// Abort the probes' requests and forget their transfers (the split ended).
struct CloseProbes {
  friend bool operator==(const CloseProbes&, const CloseProbes&) = default;
};
// Queue these events for the listener.
struct Deliver {
  std::vector<DataChangedEvent> events;
  friend bool operator==(const Deliver&, const Deliver&) = default;
};
// Queue this state of the key for the observer.
struct ReportKey {
  std::optional<consul::DirEntry> entry;
  friend bool operator==(const ReportKey&, const ReportKey&) = default;
};
// The server that failed should be avoided (consul::ClientExchanges::AvoidServer).
struct AvoidServer {
  friend bool operator==(const AvoidServer&, const AvoidServer&) = default;
};
// A tree watch re-listed after an index reset (registry_consul_watch_relists_total).
struct CountRelist {
  friend bool operator==(const CountRelist&, const CountRelist&) = default;
};
// Log `text` (component "watch").
struct Note {
  LogLevel level = LogLevel::kInfo;
  std::string text;
  friend bool operator==(const Note&, const Note&) = default;
};
using QueryAction = std::variant<Send, Wait, OpenProbes, CloseProbes, Deliver, ReportKey,
                                 AvoidServer, CountRelist, Note>;

// The transition: updates `*state` (in place, the same as returning the next state without
// copying the listener's view) and returns what to do.
std::vector<QueryAction> Transition(const QueryRules& rules, WatchState* state,
                                    const QueryInput& input);

// The state of query `query` (kOwnQuery, or a probe of the current split).
const QueryState& QueryOf(const WatchState& state, QueryIndex query);
// Whether the request in flight of `query` may open a new connection (rule 7).
bool MayOpenConnection(const WatchState& state, QueryIndex query);
bool IsKeyWatch(const WatchState& state);

}  // namespace registry::watch

#endif  // WATCH_QUERY_MACHINE_H_
