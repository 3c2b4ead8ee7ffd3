// SPDX-License-Identifier: Apache-2.0
// devserver/api.h
//
// Api turns HTTP requests into Consul's answers: routing, method checks (405), query options
// (?wait, ?index, ?dc, ?consistent/?stale, tokens), ACL (403), status codes, headers and JSON
// shapes for /v1/kv, /v1/session, /v1/txn, /v1/status, /v1/agent/self and the dev-only
// /v1/_dev controls. It does no I/O: a read with ?index > 0 comes back as a BlockingQuery
// that the network layer drives (wait on a store watch, re-run, give up at the timeout), so a
// blocked query holds no thread.
//
// Thread safety: Handle may be called concurrently from any thread; a BlockingQuery belongs
// to one caller at a time.
#ifndef DEVSERVER_API_H_
#define DEVSERVER_API_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "devserver/faults.h"
#include "devserver/http_message.h"
#include "devserver/store.h"
#include "devserver/store_types.h"

namespace registry::devserver {

struct ApiConfig {
  std::string datacenter = "dc1";
  std::string node_name = "dev";
  std::string acl_master_token;  // empty: ACLs disabled
  bool enable_fault_injection = false;
  absl::Duration default_query_time = absl::Minutes(5);
  absl::Duration max_query_time = absl::Minutes(10);
  std::string advertise_host = "127.0.0.1";  // reported by /v1/status and /v1/agent/self
  int http_port = 0;                         // reported by /v1/agent/self (see set_http_port)
};

// One run of a blocking read: the response it would send now and what decides whether to.
struct QueryEvaluation {
  HttpResponse response;
  uint64_t index = 1;      // X-Consul-Index of `response` (already >= 1)
  bool not_found = false;  // a single-key GET that found nothing
  uint64_t version = 0;    // store version the read was taken at
  uint64_t epoch = 0;      // store epoch the read was taken at
};

// Consul's blockingQuery loop, minus the waiting: the caller runs Step(), and when it
// returns nullopt waits for a store change (Store::Watch on scope() at the returned version)
// or the deadline, then runs Step() again.
class BlockingQuery {
 public:
  BlockingQuery(WatchScope scope, uint64_t min_index, absl::Duration timeout,
                std::function<QueryEvaluation()> evaluate);

  // What to watch between steps.
  const WatchScope& scope() const { return scope_; }
  // How long the query may block in total (wait capped to the max query time, or the default
  // query time, plus up to 1/16 jitter).
  absl::Duration timeout() const { return timeout_; }

  // Runs the query once. Returns the response when it is complete: its index is above the
  // requested one (a key that stays missing does not count after the first run), the store
  // was reset underneath it, or `timed_out`. Otherwise returns nullopt and sets
  // *watch_version to the store version to watch from.
  std::optional<HttpResponse> Step(bool timed_out, uint64_t* watch_version);

 private:
  const WatchScope scope_;
  uint64_t min_index_;
  const absl::Duration timeout_;
  const std::function<QueryEvaluation()> evaluate_;
  bool ran_ = false;
  bool seen_not_found_ = false;
  uint64_t start_epoch_ = 0;
};

using ApiOutcome = std::variant<HttpResponse, std::unique_ptr<BlockingQuery>>;

class Api {
 public:
  // `store`, `faults` and `stats` must outlive the Api.
  Api(ApiConfig config, Store* store, FaultInjector* faults, RequestStats* stats);
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Answers `request`, or returns the blocking query that will. Never fails: every problem is
  // an HTTP status with Consul's message.
  ApiOutcome Handle(const HttpRequest& request);

  // The answer of the KV or txn endpoint to `request`, a PUT whose body (not read, so
  // request.body is empty) is over any limit, by its Content-Length: Consul's 413; nullopt for
  // other requests.
  std::optional<HttpResponse> RefuseOversizedBody(const HttpRequest& request) const;

  // True for API paths subject to injected latency and dropped connections (everything but
  // the /v1/_dev/ controls).
  static bool IsFaultablePath(absl::string_view path);

  // Records the port actually bound (reported by /v1/agent/self).
  void set_http_port(int port);

 private:
  struct QueryOptions {
    uint64_t min_index = 0;
    absl::Duration wait = absl::ZeroDuration();
  };

  // Validates ?wait, ?index, ?stale/?consistent like Consul's parse(); 400 on error.
  std::variant<QueryOptions, HttpResponse> ParseQueryOptions(const HttpRequest& request);
  // 500 "No path to datacenter" for a foreign ?dc.
  std::optional<HttpResponse> CheckDatacenter(const HttpRequest& request) const;
  // 403 for a missing ("Permission denied") or wrong ("ACL not found") token when ACLs are on;
  // the token comes from ?token, X-Consul-Token or Authorization: Bearer.
  std::optional<HttpResponse> CheckToken(const HttpRequest& request) const;
  // What Consul's RPC layer checks before touching state: datacenter, token, then an injected
  // "No cluster leader" failure. With `filtered`, for a read that Consul filters by ACL instead
  // of refusing (lists, session reads, txn): a caller with no token at all (the anonymous token,
  // which may read nothing) passes, and `*filtered` says that the answer must then hold nothing.
  std::optional<HttpResponse> BeforeStoreCall(const HttpRequest& request,
                                              bool* filtered = nullptr) const;
  // Runs `evaluate` now, or wraps it in a BlockingQuery when ?index > 0.
  ApiOutcome Read(const QueryOptions& options, WatchScope scope,
                  std::function<QueryEvaluation()> evaluate);
  absl::Duration QueryTimeout(absl::Duration wait);

  ApiOutcome HandleKv(const HttpRequest& request);
  ApiOutcome KvGet(const HttpRequest& request, const std::string& key, const QueryOptions& options);
  HttpResponse KvPut(const HttpRequest& request, const std::string& key);
  HttpResponse KvDelete(const HttpRequest& request, const std::string& key);
  ApiOutcome HandleSession(const HttpRequest& request);
  HttpResponse SessionCreate(const HttpRequest& request);
  // BeforeStoreCall for destroy/renew of session `id`, then Consul's lookup of the session (500
  // `error_prefix` + go-memdb's message for an ID that is not a UUID), then the permission
  // check that refuses the anonymous token.
  std::optional<HttpResponse> BeforeSessionWrite(const HttpRequest& request, const std::string& id,
                                                 absl::string_view error_prefix) const;
  HttpResponse CatalogRegister(const HttpRequest& request);
  HttpResponse HandleTxn(const HttpRequest& request);
  HttpResponse StatusLeader() const;
  HttpResponse StatusPeers() const;
  HttpResponse AgentSelf() const;
  HttpResponse HandleDev(const HttpRequest& request);

  const ApiConfig config_;
  std::atomic<int> http_port_;
  Store* const store_;
  FaultInjector* const faults_;
  RequestStats* const stats_;
  mutable absl::Mutex mu_;
  absl::BitGen rng_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::devserver

#endif  // DEVSERVER_API_H_
