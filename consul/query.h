// SPDX-License-Identifier: Apache-2.0
// consul/query.h
//
// Blocking-query plumbing shared by every read: QueryOptions (index, wait, consistency) turned
// into query parameters, QueryMeta parsed from the response headers, the client-side timeout of
// a blocking read, and IndexTracker, the index bookkeeping of a blocking loop.
//
// Consul semantics relied on: index 0 is a plain read; otherwise the server holds the request
// until its index exceeds `index` or `wait` elapses (plus up to wait/16 of jitter) and then
// answers normally. X-Consul-Index is never 0. A return is no proof of change, and the index
// can go backwards (tombstone reaping, snapshot restore), which means "re-list from scratch".
#ifndef CONSUL_QUERY_H_
#define CONSUL_QUERY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "consul/http_types.h"

namespace registry::consul {

// Server-side wait Consul applies when a blocking read sends none (default_query_time).
inline constexpr absl::Duration kConsulDefaultWait = absl::Minutes(5);

struct QueryOptions {
  // 0: plain read. Otherwise block until the result's index exceeds this one.
  uint64_t index = 0;
  // How long the server may block (only with index > 0). Sent in milliseconds; zero lets the
  // server use its default (kConsulDefaultWait).
  absl::Duration wait = absl::ZeroDuration();
  // Consistency mode: neither = default (leader answers), `consistent` = leader verifies its
  // leadership first, `stale` = any server answers. Setting both is InvalidArgument.
  bool consistent = false;
  bool stale = false;
};

// A plain read that sees every write acknowledged before it began. Consul's default mode may
// answer, right after a leader change or a server restart, from a state that has not yet caught up
// with the log (seen on 1.8.7: a value 300 writes old, read back after a successful write); with
// ?consistent the leader first confirms its leadership and waits until it is ready to serve.
// Costs the leader one heartbeat round to its followers.
inline QueryOptions ConsistentRead() {
  QueryOptions query;
  query.consistent = true;
  return query;
}

struct QueryMeta {
  uint64_t index = 0;                                  // X-Consul-Index, always >= 1
  bool known_leader = false;                           // X-Consul-KnownLeader: true
  absl::Duration last_contact = absl::ZeroDuration();  // X-Consul-LastContact (ms)
};

// Formats a wait for the `wait` parameter: whole milliseconds ("1500ms", "90000ms"), sub-ms
// parts truncated, a positive wait below 1 ms sent as "1ms". Returns "" for wait <= 0.
std::string FormatWait(absl::Duration wait);

// Client-side timeout of a blocking read: wait + wait/16 (Consul's jitter) + margin.
absl::Duration BlockingTimeout(absl::Duration wait, absl::Duration margin);

// Appends index/wait and consistency parameters for `query` to `request` (in that order) and
// sets request->wait to the server-side wait to expect (zero for a plain read).
// Errors: InvalidArgument when both consistent and stale are set, or wait is negative.
absl::Status ApplyQueryOptions(const QueryOptions& query, HttpRequest* request);

// Parses the query headers of a read's response. X-Consul-Index must be a base-10 uint64
// (0 is clamped to 1); missing or malformed -> DataLoss naming the request. A missing
// KnownLeader means false, a missing LastContact zero; malformed LastContact -> DataLoss.
absl::StatusOr<QueryMeta> ParseQueryMeta(const HttpRequest& request, const HttpResponse& response);

// IndexTracker follows the index of one blocking loop: feed it every response's index and send
// next_index() with the next query.
//
// Thread safety: not thread-safe; owned by the one loop that uses it.
class IndexTracker {
 public:
  enum class Change {
    kChanged,    // index grew: the data may have changed (still no proof)
    kUnchanged,  // same index: nothing changed (wait elapsed or spurious wake-up)
    kReset,      // index went backwards: next_index() is 0, re-list and diff from scratch
  };

  // Records the index of a response. An index of 0 counts as 1.
  Change Observe(uint64_t index);

  // Index for the next query: 0 before the first read or after a reset, else >= 1.
  uint64_t next_index() const { return index_; }

  // Forgets the index (next_index() becomes 0), e.g. after an error that requires a re-list.
  void Reset() { index_ = 0; }

 private:
  uint64_t index_ = 0;
};

}  // namespace registry::consul

#endif  // CONSUL_QUERY_H_
