// HttpServer: the Boost.Asio/Beast network layer. All connection state lives on the single
// IO thread; other threads reach it only through IoHandle::Post.
#include "integration/devserver/http_server.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"

namespace registry::devserver {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr size_t kHeaderLimit = 64 * 1024;
constexpr size_t kBodyLimit = 1024 * 1024;

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
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

}  // namespace

class Connection;

class HttpServer::Impl {
 public:
  Impl(Api* api, Store* store, FaultInjector* faults)
      : ioc_(std::make_unique<asio::io_context>(1)),
        io_handle_(std::make_shared<IoHandle>(ioc_.get())),
        api_(api),
        store_(store),
        faults_(faults) {}
  ~Impl() { Stop(); }

  absl::Status Listen(const std::string& host, int port);
  void Run();
  void Stop();
  void DropAll();
  int port() const { return port_; }
  size_t connection_count() const { return connection_count_.load(); }

  // IO thread only.
  void Unregister(uint64_t id) {
    connections_.erase(id);
    connection_count_.store(connections_.size());
  }
  void DropOthers(uint64_t keep_id);
  Api* api() const { return api_; }
  Store* store() const { return store_; }
  FaultInjector* faults() const { return faults_; }
  const std::shared_ptr<IoHandle>& io_handle() const { return io_handle_; }

 private:
  void Accept();
  void ArmReaper(absl::Time deadline);

  std::unique_ptr<asio::io_context> ioc_;  // destroyed in Stop(), after the IO thread joined
  std::shared_ptr<IoHandle> io_handle_;
  Api* const api_;
  Store* const store_;
  FaultInjector* const faults_;
  std::optional<tcp::acceptor> acceptor_;
  std::optional<asio::steady_timer> reaper_;
  std::optional<asio::steady_timer> accept_retry_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<size_t> connection_count_{0};
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
  // IO thread only (and Stop() after the IO thread joined):
  absl::flat_hash_map<uint64_t, std::weak_ptr<Connection>> connections_;
  uint64_t next_connection_id_ = 1;
  absl::Time reaper_deadline_ = absl::InfiniteFuture();
  uint64_t reaper_generation_ = 0;
};

// One client connection; lives as long as an asynchronous operation references it.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpServer::Impl* server, uint64_t id)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), server_(server), id_(id) {}
  ~Connection() {
    CancelWatch();
    server_->Unregister(id_);
  }

  void Start() { ReadHeader(); }

  // Closes the socket without a reply; pending operations end with operation_aborted.
  void Close() {
    closed_ = true;
    CancelWatch();
    query_.reset();
    ++timer_generation_;
    timer_.cancel();
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  void ReadHeader() {
    if (closed_) return;
    request_ = HttpRequest{};  // an idle connection keeps nothing of its last request
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kBodyLimit);
    http::async_read_header(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(error_code ec) {
    if (ec) return OnReadError(ec);
    // Go's server sends "100 Continue" when the handler reads the body; clients such as curl
    // otherwise wait a second before sending it.
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      auto interim =
          std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      http::async_write(socket_, *interim,
                        [self = shared_from_this(), interim](error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, size_t) { self->OnBody(ec); });
  }

  void OnReadError(error_code ec) {
    if (ec == http::error::header_limit) {
      return SendPlain(431, "Request Header Fields Too Large", /*close=*/true);
    }
    if (ec == http::error::body_limit) {
      return SendPlain(413,
                       absl::StrCat("Request body too large, max size: ", kBodyLimit, " bytes"),
                       /*close=*/true);
    }
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == http::error::partial_message || closed_) {
      return Close();
    }
    SendPlain(400, "Bad Request", /*close=*/true);  // malformed HTTP
  }

  void OnBody(error_code ec) {
    if (ec) return OnReadError(ec);
    const boost::optional<uint64_t> content_length = parser_->content_length();
    http::request<http::string_body> message = parser_->release();
    parser_.reset();
    keep_alive_ = message.keep_alive();
    request_ = HttpRequest{};
    reply_fault_ = FaultInjector::ReplyFault::kNone;
    request_.method = std::string(message.method_string());
    auto target = ParseTarget(std::string(message.target()));
    // Go's server refuses a target it cannot parse before any handler runs.
    if (!target.ok()) return SendPlain(400, "400 Bad Request", /*close=*/true);
    request_.path = std::move(target->first);
    request_.query = std::move(target->second);
    request_.raw_query = std::string(RawQuery({message.target().data(), message.target().size()}));
    request_.consul_token = std::string(message["X-Consul-Token"]);
    request_.authorization = std::string(message[http::field::authorization]);
    if (content_length.has_value()) request_.content_length = *content_length;
    request_.body = std::move(message.body());

    FaultInjector* faults = server_->faults();
    if (Api::IsFaultablePath(request_.path)) {
      if (faults->ConsumeDrop()) return Close();
      reply_fault_ = faults->ConsumeReplyFault(request_.method, request_.path);
      const absl::Duration latency = faults->latency();
      if (latency > absl::ZeroDuration()) {
        const uint64_t generation = ++timer_generation_;
        timer_.expires_after(ToChrono(latency));
        timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
          if (ec || generation != self->timer_generation_ || self->closed_) return;
          self->Handle();
        });
        return;
      }
    }
    Handle();
  }

  void Handle() {
    ApiOutcome outcome = server_->api()->Handle(request_);
    if (auto* response = std::get_if<HttpResponse>(&outcome)) return Send(std::move(*response));
    query_ = std::move(std::get<std::unique_ptr<BlockingQuery>>(outcome));
    buffer_.shrink_to_fit();  // a parked query keeps as little memory as possible
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(ToChrono(query_->timeout()));
    timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
      if (ec || generation != self->timer_generation_ || !self->query_) return;
      self->CancelWatch();
      uint64_t unused = 0;
      std::optional<HttpResponse> response = self->query_->Step(/*timed_out=*/true, &unused);
      self->Finish(std::move(*response));
    });
    WatchPeer(generation);
    RunQuery();
  }

  // While a query is parked nothing reads the socket; this notices a client that hangs up
  // (the socket turns readable with nothing to read) so its query does not linger until the
  // timeout.
  void WatchPeer(uint64_t generation) {
    socket_.async_wait(tcp::socket::wait_read,
                       [self = shared_from_this(), generation](error_code ec) {
                         if (ec || generation != self->timer_generation_ || !self->query_) return;
                         error_code available_ec;
                         if (self->socket_.available(available_ec) == 0 || available_ec)
                           self->Close();
                       });
  }

  // Re-runs the parked query until it completes or a watch is registered.
  void RunQuery() {
    while (query_) {
      uint64_t version = 0;
      std::optional<HttpResponse> response = query_->Step(/*timed_out=*/false, &version);
      if (response.has_value()) return Finish(std::move(*response));
      const uint64_t generation = ++wake_generation_;
      std::optional<Store::WatchId> id = server_->store()->Watch(
          query_->scope(), version,
          [handle = server_->io_handle(), weak = weak_from_this(), generation] {
            handle->Post([weak, generation] {
              if (auto self = weak.lock()) self->OnWake(generation);
            });
          });
      if (id.has_value()) {
        watch_id_ = id;
        return;
      }
      // The store changed since the read: run the query again right away.
    }
  }

  void OnWake(uint64_t generation) {
    if (!query_ || generation != wake_generation_) return;
    watch_id_.reset();  // fired watches are gone from the store
    RunQuery();
  }

  void CancelWatch() {
    if (watch_id_.has_value()) server_->store()->CancelWatch(*watch_id_);
    watch_id_.reset();
    ++wake_generation_;
  }

  void Finish(HttpResponse response) {
    CancelWatch();
    query_.reset();
    ++timer_generation_;
    timer_.cancel();
    Send(std::move(response));
  }

  void SendPlain(int status, absl::string_view text, bool close) {
    HttpResponse response;
    response.status = status;
    response.content_type = "text/plain; charset=utf-8";
    response.body = std::string(text);
    response.outside_handlers = true;
    response.server_level = true;
    if (close) {
      keep_alive_ = false;
      linger_ = true;  // the client may still be sending the request we refused
    }
    Send(std::move(response));
  }

  // Closes after an error reply without resetting the connection under a client that is
  // still sending (which would make it miss the reply): stop sending, discard what arrives
  // for up to 1 s, then close.
  void LingerThenClose() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
      if (!ec && generation == self->timer_generation_) self->Close();
    });
    Drain();
  }

  void Drain() {
    if (closed_) return;
    if (!scratch_) scratch_ = std::make_unique<std::array<char, 4096>>();
    socket_.async_read_some(asio::buffer(*scratch_),
                            [self = shared_from_this()](error_code ec, size_t) {
                              if (ec) return self->Close();
                              self->Drain();
                            });
  }

  void Send(HttpResponse response) {
    if (closed_) return;
    // Handled, but the client never hears of it, or hears a 500.
    if (reply_fault_ == FaultInjector::ReplyFault::kDrop) return Close();
    if (reply_fault_ == FaultInjector::ReplyFault::kServerError) {
      response = HttpResponse();
      response.status = 500;
      response.content_type = "text/plain; charset=utf-8";
      response.body = "rpc error making call: timed out enqueuing operation";
    }
    auto message = std::make_shared<http::response<http::string_body>>();
    message->version(11);
    message->result(static_cast<unsigned>(response.status));
    message->keep_alive(keep_alive_);
    if (!response.content_type.empty())
      message->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message->set(name, value);
    // Go's server writes its own refusals (SendPlain) bare: no Date, no Content-Length.
    if (!response.server_level) message->set(http::field::date, HttpDate(absl::Now()));
    if (!response.outside_handlers) message->set(http::field::vary, "Accept-Encoding");
    // A response to HEAD carries no body (the client would read it as the next response).
    if (request_.method != "HEAD") message->body() = std::move(response.body);
    if (!response.server_level) message->prepare_payload();
    const bool drop_others = response.drop_other_connections;
    http::async_write(socket_, *message,
                      [self = shared_from_this(), message, drop_others](error_code ec, size_t) {
                        if (ec) return self->Close();
                        if (drop_others) self->server_->DropOthers(self->id_);
                        if (!self->keep_alive_) {
                          return self->linger_ ? self->LingerThenClose() : self->Close();
                        }
                        self->ReadHeader();
                      });
  }

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
  asio::steady_timer timer_;  // injected latency, then the blocking-query deadline
  uint64_t timer_generation_ = 0;
  std::unique_ptr<BlockingQuery> query_;
  std::optional<Store::WatchId> watch_id_;
  uint64_t wake_generation_ = 0;
  HttpServer::Impl* const server_;
  const uint64_t id_;
};

absl::Status HttpServer::Impl::Listen(const std::string& host, int port) {
  error_code ec;
  asio::ip::address address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("http_addr: '", host, "' is not an IP address (or localhost)"));
  }
  const tcp::endpoint endpoint(address, static_cast<uint16_t>(port));
  acceptor_.emplace(*ioc_);
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("http_addr: cannot listen on ", host, ":", port, ": ", ec.message()));
  }
  port_ = acceptor_->local_endpoint(ec).port();
  return absl::OkStatus();
}

void HttpServer::Impl::Run() {
  reaper_.emplace(*ioc_);
  accept_retry_.emplace(*ioc_);
  store_->SetDeadlineListener([handle = io_handle_, this](absl::Time deadline) {
    handle->Post([this, deadline] {
      if (deadline < reaper_deadline_) ArmReaper(deadline);
    });
  });
  asio::post(*ioc_, [this] { ArmReaper(store_->Tick()); });
  Accept();
  thread_ = std::thread([this] {
    for (;;) {
      try {
        ioc_->run();
        return;
      } catch (const std::exception& e) {  // a handler threw: log and keep serving
        std::fprintf(stderr, "consul-dev-server: IO thread caught: %s\n", e.what());
      }
    }
  });
}

void HttpServer::Impl::Accept() {
  acceptor_->async_accept([this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;
    if (!ec) {
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      const uint64_t id = next_connection_id_++;
      auto connection = std::make_shared<Connection>(std::move(socket), this, id);
      connections_.emplace(id, connection);
      connection_count_.store(connections_.size());
      connection->Start();
      return Accept();
    }
    // Out of file descriptors or similar: retry shortly instead of spinning.
    accept_retry_->expires_after(std::chrono::milliseconds(50));
    accept_retry_->async_wait([this](error_code wait_ec) {
      if (!wait_ec) Accept();
    });
  });
}

void HttpServer::Impl::ArmReaper(absl::Time deadline) {
  reaper_deadline_ = deadline;
  const uint64_t generation = ++reaper_generation_;
  if (deadline == absl::InfiniteFuture()) {
    reaper_->cancel();
    return;
  }
  reaper_->expires_after(ToChrono(deadline - absl::Now()));
  reaper_->async_wait([this, generation](error_code ec) {
    if (ec || generation != reaper_generation_) return;
    ArmReaper(store_->Tick());
  });
}

void HttpServer::Impl::DropOthers(uint64_t keep_id) {
  std::vector<std::shared_ptr<Connection>> doomed;
  for (const auto& [id, weak] : connections_) {
    if (id == keep_id) continue;
    if (auto connection = weak.lock()) doomed.push_back(std::move(connection));
  }
  for (auto& connection : doomed) connection->Close();
}

void HttpServer::Impl::DropAll() {
  auto done = std::make_shared<absl::Notification>();
  if (!io_handle_->Post([this, done] {
        DropOthers(0);
        done->Notify();
      })) {
    return;
  }
  done->WaitForNotificationWithTimeout(absl::Seconds(5));
}

void HttpServer::Impl::Stop() {
  {
    absl::MutexLock lock(&stop_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  store_->SetDeadlineListener(nullptr);
  io_handle_->Disarm();  // from here on nothing new reaches the IO thread
  ioc_->stop();
  if (thread_.joinable()) thread_.join();
  error_code ignored;
  if (acceptor_.has_value()) acceptor_->close(ignored);
  acceptor_.reset();
  reaper_.reset();
  accept_retry_.reset();
  // Destroying the context destroys every pending handler, and with them the connections
  // (closing their sockets and cancelling their store watches).
  ioc_.reset();
  connections_.clear();
  connection_count_.store(0);
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& host, int port,
                                                              Api* api, Store* store,
                                                              FaultInjector* faults) {
  auto impl = std::make_unique<Impl>(api, store, faults);
  if (absl::Status listening = impl->Listen(host, port); !listening.ok()) return listening;
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() { impl_->Stop(); }

void HttpServer::DropAllConnections() { impl_->DropAll(); }

size_t HttpServer::connection_count() const { return impl_->connection_count(); }

}  // namespace registry::devserver
