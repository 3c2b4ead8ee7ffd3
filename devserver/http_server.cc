// SPDX-License-Identifier: Apache-2.0
// HttpServer: the Boost.Asio/Beast network layer (connections: http_connection.cc). All
// connection state lives on the single IO thread; other threads reach it only through
// IoHandle::Post.
#include "devserver/http_server.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "devserver/http_server_internal.h"

namespace registry::devserver {

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
      Admit(std::move(socket));
      return Accept();
    }
    // Out of file descriptors or similar: retry shortly instead of spinning.
    accept_retry_->expires_after(std::chrono::milliseconds(50));
    accept_retry_->async_wait([this](error_code wait_ec) {
      if (!wait_ec) Accept();
    });
  });
}

void HttpServer::Impl::Admit(tcp::socket socket) {
  error_code ec;
  const std::string client = socket.remote_endpoint(ec).address().to_string();
  if (ec) return;  // gone already
  int& open = open_per_client_[client];
  if (limits_.max_per_client > 0 && open >= limits_.max_per_client) {
    std::fprintf(stderr,
                 "consul-dev-server: closed a connection from %s: it holds %d already "
                 "(--http-max-conns-per-client)\n",
                 client.c_str(), open);
    socket.close(ec);
    return;
  }
  ++open;
  socket.set_option(tcp::no_delay(true), ec);
  const uint64_t id = next_connection_id_++;
  auto connection = std::make_shared<Connection>(std::move(socket), this, id);
  connections_.emplace(id, connection);
  client_of_.emplace(id, client);
  connection_count_.store(connections_.size());
  accepted_count_.fetch_add(1);
  connection->Start();
}

void HttpServer::Impl::Unregister(uint64_t id) {
  connections_.erase(id);
  connection_count_.store(connections_.size());
  const auto client = client_of_.find(id);
  if (client == client_of_.end()) return;
  const auto open = open_per_client_.find(client->second);
  if (open != open_per_client_.end() && --open->second <= 0) open_per_client_.erase(open);
  client_of_.erase(client);
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
  client_of_.clear();
  open_per_client_.clear();
  connection_count_.store(0);
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& host, int port,
                                                              Api* api, Store* store,
                                                              FaultInjector* faults,
                                                              ConnectionLimits limits) {
  auto impl = std::make_unique<Impl>(api, store, faults, limits);
  if (absl::Status listening = impl->Listen(host, port); !listening.ok()) return listening;
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() { impl_->Stop(); }

void HttpServer::DropAllConnections() { impl_->DropAll(); }

size_t HttpServer::connection_count() const { return impl_->connection_count(); }

uint64_t HttpServer::accepted_count() const { return impl_->accepted_count(); }

}  // namespace registry::devserver
