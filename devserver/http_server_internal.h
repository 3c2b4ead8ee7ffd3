// SPDX-License-Identifier: Apache-2.0
// devserver/http_server_internal.h
//
// Internal to the dev server's network layer (http_server.cc: the server; http_connection.cc:
// one client connection): the Boost.Asio/Beast types they share. Nothing else includes it, so
// Beast stays out of the other layers.
//
// Thread safety: everything here lives on the server's single IO thread, except IoHandle and
// what HttpServer::Impl documents.
#ifndef DEVSERVER_HTTP_SERVER_INTERNAL_H_
#define DEVSERVER_HTTP_SERVER_INTERNAL_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "devserver/http_server.h"

namespace registry::devserver {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

inline constexpr size_t kHeaderLimit = 64 * 1024;
inline constexpr size_t kBodyLimit = 1024 * 1024;

inline std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return std::chrono::nanoseconds(absl::ToInt64Nanoseconds(std::max(d, absl::ZeroDuration())));
}

// Lets other threads (store watch callbacks, the store's deadline listener, DevServer's
// controls) post work to the IO thread until the server stops.
class IoHandle {
 public:
  explicit IoHandle(asio::io_context* ioc) : ioc_(ioc) {}
  template <typename F>
  bool Post(F&& work) {
    absl::MutexLock lock(&mu_);
    if (ioc_ == nullptr) return false;
    asio::post(*ioc_, std::forward<F>(work));
    return true;
  }
  void Disarm() {
    absl::MutexLock lock(&mu_);
    ioc_ = nullptr;
  }

 private:
  absl::Mutex mu_;
  asio::io_context* ioc_ ABSL_GUARDED_BY(mu_);
};

class Connection;

class HttpServer::Impl {
 public:
  Impl(Api* api, Store* store, FaultInjector* faults, ConnectionLimits limits)
      : ioc_(std::make_unique<asio::io_context>(1)),
        io_handle_(std::make_shared<IoHandle>(ioc_.get())),
        api_(api),
        store_(store),
        faults_(faults),
        limits_(limits) {}
  ~Impl() { Stop(); }

  absl::Status Listen(const std::string& host, int port);
  void Run();
  void Stop();
  void DropAll();
  int port() const { return port_; }
  size_t connection_count() const { return connection_count_.load(); }
  uint64_t accepted_count() const { return accepted_count_.load(); }

  // IO thread only.
  void Unregister(uint64_t id);
  void DropOthers(uint64_t keep_id);
  Api* api() const { return api_; }
  Store* store() const { return store_; }
  FaultInjector* faults() const { return faults_; }
  absl::Duration read_timeout() const { return limits_.read_timeout; }
  const std::shared_ptr<IoHandle>& io_handle() const { return io_handle_; }

 private:
  void Accept();
  // Takes `socket` on as a connection, or closes it if its client holds the most it may.
  void Admit(tcp::socket socket);
  void ArmReaper(absl::Time deadline);

  std::unique_ptr<asio::io_context> ioc_;  // destroyed in Stop(), after the IO thread joined
  std::shared_ptr<IoHandle> io_handle_;
  Api* const api_;
  Store* const store_;
  FaultInjector* const faults_;
  const ConnectionLimits limits_;
  std::optional<tcp::acceptor> acceptor_;
  std::optional<asio::steady_timer> reaper_;
  std::optional<asio::steady_timer> accept_retry_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<size_t> connection_count_{0};
  std::atomic<uint64_t> accepted_count_{0};
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
  // IO thread only (and Stop() after the IO thread joined):
  absl::flat_hash_map<uint64_t, std::weak_ptr<Connection>> connections_;
  absl::flat_hash_map<uint64_t, std::string> client_of_;   // connection id -> client address
  absl::flat_hash_map<std::string, int> open_per_client_;  // client address -> connections
  uint64_t next_connection_id_ = 1;
  absl::Time reaper_deadline_ = absl::InfiniteFuture();
  uint64_t reaper_generation_ = 0;
};

// One client connection; lives as long as an asynchronous operation references it.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpServer::Impl* server, uint64_t id)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), server_(server), id_(id) {}
  ~Connection();

  void Start() { ReadHeader(); }

  // Closes the socket without a reply; pending operations end with operation_aborted.
  void Close();

 private:
  // Reading a request: header (answering "Expect: 100-continue"), body, then Handle(); a read
  // error ends the connection, or answers 400/413/431 first.
  void ReadHeader();
  // Closes the connection unless a whole request arrives within the server's read timeout.
  void ArmReadTimeout();
  void OnHeader(error_code ec);
  void ReadBody();
  void OnReadError(error_code ec);
  void OnBody(error_code ec);
  // Runs the API on the request: sends its reply, or parks its blocking query.
  void Handle();

  // While a query is parked nothing reads the socket; this notices a client that hangs up
  // (the socket turns readable with nothing to read) so its query does not linger until the
  // timeout.
  void WatchPeer(uint64_t generation);

  // Re-runs the parked query until it completes or a watch is registered.
  void RunQuery();
  void OnWake(uint64_t generation);
  void CancelWatch();
  // Ends the parked query with `response`.
  void Finish(HttpResponse response);
  // A plain-text reply written by the server itself (not a handler); `close` ends the
  // connection after it.
  void SendPlain(int status, absl::string_view text, bool close);
  // A request whose body is over kBodyLimit, refused unread: the KV and txn endpoints answer as
  // Consul's handlers do (they check Content-Length first), anything else gets a plain 413.
  void RefuseOversizedBody();

  // Closes after an error reply without resetting the connection under a client that is
  // still sending (which would make it miss the reply): stop sending, discard what arrives
  // for up to 1 s, then close.
  void LingerThenClose();
  void Drain();
  // Writes `response` (or the injected reply fault instead), then reads the next request.
  void Send(HttpResponse response);

  tcp::socket socket_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest request_;
  bool keep_alive_ = true;
  bool closed_ = false;
  bool linger_ = false;
  // The current request is handled, then its reply replaced (kDrop: closed without one).
  FaultInjector::ReplyFault reply_fault_ = FaultInjector::ReplyFault::kNone;
  std::unique_ptr<std::array<char, 4096>> scratch_;  // discarded input while lingering
  // The read timeout while a request is awaited, then injected latency, then the blocking
  // query's deadline.
  asio::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  std::unique_ptr<BlockingQuery> query_;
  std::optional<Store::WatchId> watch_id_;
  uint64_t wake_generation_ = 0;
  HttpServer::Impl* const server_;
  const uint64_t id_;
};

}  // namespace registry::devserver

#endif  // DEVSERVER_HTTP_SERVER_INTERNAL_H_
