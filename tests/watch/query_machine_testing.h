// SPDX-License-Identifier: Apache-2.0
// Helpers of the query machine's tests (query_machine_test.cc, query_machine_split_test.cc):
// Consul's answers as the IO loop hands them over, fixed rules and times (no clock), and the
// actions described as short strings, so that a test reads as the list of what the loop does.
#ifndef TESTS_WATCH_QUERY_MACHINE_TESTING_H_
#define TESTS_WATCH_QUERY_MACHINE_TESTING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "consul/http_types.h"
#include "consul/kv.h"
#include "watch/query_machine.h"

namespace registry::watch::testing {

// The time the tests start at; every other time is an offset from it.
inline const absl::Time kT0 = absl::FromUnixSeconds(1'000'000);
// The server-side wait of every blocking query: an answer before half of it is early.
inline constexpr absl::Duration kWait = absl::Seconds(60);
// Back-offs in a row n wait n seconds (the engine's are jittered and doubling).
inline constexpr absl::Duration kBackoffUnit = absl::Seconds(1);
inline constexpr absl::Duration kGuardPause = absl::Milliseconds(50);

// kWait, kGuardPause, back-offs of n * kBackoffUnit, and a split of more than `split_threshold`
// keys into at most `max_queries` queries.
QueryRules TestRules(size_t split_threshold = 1024, int max_queries = 32);

// One KV entry of a listing.
struct Kv {
  std::string key;
  std::string value;
  uint64_t modify_index = 1;
};

// What came back for one request, as the loop hands it to the machine: the request, and
// Consul's HTTP answer or the transport's failure.
class Reply {
 public:
  Reply(consul::HttpRequest request, absl::StatusOr<consul::HttpResponse> response)
      : request_(std::move(request)), response_(std::move(response)) {}
  // The input of this reply to query `query` at `now`, decoded by consul::ParseKvReadAnswer as
  // the loop does. The reply must outlive the input.
  Answered To(QueryIndex query, absl::Time now) const;

 private:
  consul::HttpRequest request_;
  absl::StatusOr<consul::HttpResponse> response_;
};

// 200: a recursive listing of `entries`, X-Consul-Index `index`.
Reply Listing(uint64_t index, const std::vector<Kv>& entries);
// 404 with X-Consul-Index `index`: nothing at the key or below the prefix.
Reply NothingThere(uint64_t index);
// 200: the single key `entry`.
Reply KeyAnswer(uint64_t index, const Kv& entry);
// 200: the names one level below a folder (a guard's answer).
Reply Names(uint64_t index, const std::vector<std::string>& names);
// An HTTP error answer (no X-Consul-Index), e.g. 403 "Permission denied", 500 "No cluster
// leader".
Reply HttpError(int status, std::string body);
// 200 with a body that is not a listing.
Reply Malformed(uint64_t index);
// No answer: the transport's failure (Unavailable "connection refused") or a cancellation.
Reply TransportError();
Reply Cancelled();

// "send own list ns/a @5", "send probe 2 names ns/t/ @9", "wait own +61s" (from kT0),
// "open 4 probes", "close probes", "deliver ADDED /a/x=1, DELETED /a/y=2",
// "report ns/k=v@7", "report absent", "avoid server", "count relist", "log warn".
std::string Describe(const QueryAction& action);
std::vector<std::string> Describe(const std::vector<QueryAction>& actions);

// Runs one transition and describes its actions.
std::vector<std::string> Step(const QueryRules& rules, WatchState* state, const QueryInput& input);

// A listing of `entries` at index `index`, as the starting read of a watch returns it.
consul::KvListResult KvListing(uint64_t index, const std::vector<Kv>& entries);

// A tree watch on `key` started from `entries` at index `index` (as Watch() makes it), after
// Started at kT0: its first blocking query is in flight.
WatchState StartedTreeWatch(const QueryRules& rules, const std::string& key, uint64_t index,
                            const std::vector<Kv>& entries);

}  // namespace registry::watch::testing

#endif  // TESTS_WATCH_QUERY_MACHINE_TESTING_H_
