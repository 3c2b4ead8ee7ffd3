// SPDX-License-Identifier: Apache-2.0
// devserver/dev_server.h
//
// DevServer is a single-node, in-memory server that speaks the parts of Consul's HTTP API the
// plugin uses (KV, sessions, txn, status, agent/self) with Consul's semantics, edge cases
// included (see docs/consul-behaviour.md and README.md). It is what the
// quickstart runs and what integration tests start in-process on port 0. Like
// `consul agent -dev` it keeps nothing on disk and is not a production store.
//
//   ServerOptions options;
//   options.session_ttl_min = absl::Seconds(1);  // short TTLs for tests
//   ASSIGN_OR_RETURN(std::unique_ptr<DevServer> server, DevServer::Start(options));
//   std::string base = absl::StrCat("http://", server->address());  // "127.0.0.1:PORT"
//
// Fault controls (latency, failing requests, dropped connections, session expiry, index
// reset) are available as methods below, and over HTTP under /v1/_dev/ when
// enable_fault_injection is set.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef DEVSERVER_DEV_SERVER_H_
#define DEVSERVER_DEV_SERVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::devserver {

class Api;
class FaultInjector;
class HttpServer;
class RequestStats;
class Store;

struct ServerOptions {
  std::string http_addr = "127.0.0.1:0";  // host:port; port 0 picks a free port
  absl::Duration session_ttl_min = absl::Seconds(10);
  absl::Duration default_query_time = absl::Minutes(5);
  absl::Duration max_query_time = absl::Minutes(10);
  std::string node_name;  // empty: this machine's host name
  std::string datacenter = "dc1";
  std::string acl_master_token;  // non-empty: every API request must carry it (else 403)
  bool enable_fault_injection = false;
  // A connection that has not sent a whole request this long after the server began waiting
  // for one (idle keep-alive time included) is closed.
  absl::Duration read_timeout = absl::Minutes(2);
  // Open connections one client address may hold (Consul's limits.http_max_conns_per_client,
  // 200 by default there too); more are closed as they are accepted. 0: no limit.
  int max_conns_per_client = 200;
};

class DevServer {
 public:
  // Validates `options` and starts serving. Errors: InvalidArgument naming the bad option
  // ("http_addr: ...", "session_ttl_min: ..."), Unavailable if the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<DevServer>> Start(ServerOptions options);

  // Stops the server (see Stop).
  ~DevServer();
  DevServer(const DevServer&) = delete;
  DevServer& operator=(const DevServer&) = delete;

  // "host:PORT" with the port actually bound, e.g. "127.0.0.1:41234".
  std::string address() const;
  int port() const;

  // Stops accepting, closes every connection and joins the IO thread. Idempotent; returns
  // promptly. Data is gone with the object.
  void Stop();

  // --- Fault controls (work whether or not enable_fault_injection is set) ---------------

  // Every later API request waits `latency` before it is handled. Zero clears it.
  void SetLatency(absl::Duration latency);
  // The next `count` KV, session and txn requests fail with 500 "No cluster leader".
  void FailNextRequests(int count);
  // The next `count` API requests have their connection closed without a reply.
  void DropNextConnections(int count);
  // The next `count` API requests with method `method` and a path starting with `path_prefix`
  // ("" for any) are handled (writes applied), then their connection is closed without the
  // reply: a server dying between applying a write and answering it.
  void DropNextReplies(int count, std::string path_prefix = "", std::string method = "");
  // As DropNextReplies, but each reply is a 500 (a raft apply that timed out and landed later).
  void FailNextRepliesAfterApplying(int count, std::string path_prefix = "",
                                    std::string method = "");
  // Closes every open connection now, without replies (blocked queries included).
  void DropAllConnections();
  // Clears latency, pending failures, drops and reply drops.
  void ClearFaults();
  // Invalidates session `id` as if its TTL ran out now. NotFound if there is no such session.
  absl::Status ExpireSession(absl::string_view id);
  // Moves every index back to `base` (as restoring an older snapshot would); data stays,
  // the next write gets `base` + 1, and blocked queries return at once.
  void ResetIndex(uint64_t base = 1);

  // --- Introspection ----------------------------------------------------------------------

  // Requests per endpoint ("kv.get", "kv.put", "session.create", "txn", ...).
  std::map<std::string, uint64_t> RequestCounts() const;
  void ResetRequestCounts();
  // Open HTTP connections.
  size_t connection_count() const;
  // Connections accepted since the start: how many times clients connected.
  uint64_t accepted_connection_count() const;
  // The state behind the API, for tests that want to look or poke directly.
  Store& store();

 private:
  DevServer();

  std::string host_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<FaultInjector> faults_;
  std::unique_ptr<RequestStats> stats_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> http_;  // declared last: stopped and destroyed first
};

}  // namespace registry::devserver

#endif  // DEVSERVER_DEV_SERVER_H_
