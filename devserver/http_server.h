// SPDX-License-Identifier: Apache-2.0
// devserver/http_server.h
//
// HttpServer is the dev server's network layer: an HTTP/1.1 server on Boost.Asio/Beast with
// one IO thread. Connections are kept alive; each request is read with limits (64 KiB of
// headers -> 431, 1 MiB of body -> 413; malformed requests -> 400, then the connection is
// closed), handed to Api, and answered. A connection that has not sent a whole request within
// the read timeout of the server starting to wait for one (idle keep-alive time included) is
// closed, and one client address may hold at most a set number of connections (Consul's
// limits.http_max_conns_per_client): more are closed as they are accepted. A blocking query holds
// no thread: it parks a store watch and a timer on its connection and is re-run when the store
// wakes it. The same thread runs the store's timers (Store::Tick at the deadline the store
// announces). Injected latency and dropped connections (FaultInjector) are applied here.
//
// This header is Beast-free on purpose (pimpl): Beast is slow to compile.
//
// Thread safety: all public methods may be called from any thread.
#ifndef DEVSERVER_HTTP_SERVER_H_
#define DEVSERVER_HTTP_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "devserver/api.h"
#include "devserver/faults.h"
#include "devserver/store.h"

namespace registry::devserver {

// What one client may hold of the server.
struct ConnectionLimits {
  // How long a connection may take to send a whole request, counted from when the server
  // starts waiting for it; then it is closed. A parked blocking query is not waiting.
  absl::Duration read_timeout = absl::Minutes(2);
  // Open connections from one client address; more are closed at once. 0: no limit.
  int max_per_client = 200;
};

class HttpServer {
 public:
  // Listens on `host`:`port` (an IPv4/IPv6 literal or "localhost"; port 0 picks a free
  // port) and starts serving on a new IO thread. `api`, `store` and `faults` must outlive
  // the server. Errors: InvalidArgument for a bad host, Unavailable if it cannot listen.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& host, int port,
                                                           Api* api, Store* store,
                                                           FaultInjector* faults,
                                                           ConnectionLimits limits = {});

  // Stops the server (see Stop).
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port.
  int port() const;

  // Stops accepting, closes every connection (blocked queries get no answer), joins the IO
  // thread and releases every store watch and timer it held. Idempotent; returns promptly.
  void Stop();

  // Closes every open connection without answering it (blocked queries included). Returns
  // once done, or after 5 s if the IO thread is wedged; no-op once stopped.
  void DropAllConnections();

  // Number of open connections (for tests and benchmarks).
  size_t connection_count() const;
  // Connections accepted since the start (for tests of connection reuse).
  uint64_t accepted_count() const;

 private:
  class Impl;
  friend class Connection;  // http_server.cc's per-connection state, which calls into Impl
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace registry::devserver

#endif  // DEVSERVER_HTTP_SERVER_H_
