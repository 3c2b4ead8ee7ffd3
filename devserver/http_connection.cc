// SPDX-License-Identifier: Apache-2.0
// devserver/http_connection.cc
//
// One client connection of the dev server: reads requests, applies injected faults, runs the
// API, parks blocking queries until the store changes or they time out, and writes replies the
// way Go's net/http does. IO thread only.
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devserver/http_server_internal.h"

namespace registry::devserver {

Connection::~Connection() {
  CancelWatch();
  server_->Unregister(id_);
}

void Connection::Close() {
  closed_ = true;
  CancelWatch();
  query_.reset();
  ++timer_generation_;
  timer_.cancel();
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

void Connection::ReadHeader() {
  if (closed_) return;
  request_ = HttpRequest{};  // an idle connection keeps nothing of its last request
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(kBodyLimit);
  ArmReadTimeout();
  http::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
}

void Connection::ArmReadTimeout() {
  const uint64_t generation = ++timer_generation_;
  timer_.expires_after(ToChrono(server_->read_timeout()));
  timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
    if (!ec && generation == self->timer_generation_ && !self->closed_) self->Close();
  });
}

void Connection::OnHeader(error_code ec) {
  if (ec) return OnReadError(ec);
  // Go's server sends "100 Continue" when the handler reads the body; clients such as curl
  // otherwise wait a second before sending it.
  if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
    auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
    http::async_write(socket_, *interim,
                      [self = shared_from_this(), interim](error_code ec, size_t) {
                        if (ec) return self->Close();
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

void Connection::ReadBody() {
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](error_code ec, size_t) { self->OnBody(ec); });
}

void Connection::OnReadError(error_code ec) {
  if (ec == http::error::header_limit) {
    return SendPlain(431, "Request Header Fields Too Large", /*close=*/true);
  }
  if (ec == http::error::body_limit) return RefuseOversizedBody();
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
      ec == http::error::partial_message || closed_) {
    return Close();
  }
  SendPlain(400, "Bad Request", /*close=*/true);  // malformed HTTP
}

void Connection::OnBody(error_code ec) {
  if (ec) return OnReadError(ec);
  ++timer_generation_;  // the whole request is in: the read timeout no longer applies
  timer_.cancel();
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

void Connection::Handle() {
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

void Connection::WatchPeer(uint64_t generation) {
  socket_.async_wait(tcp::socket::wait_read,
                     [self = shared_from_this(), generation](error_code ec) {
                       if (ec || generation != self->timer_generation_ || !self->query_) return;
                       error_code available_ec;
                       if (self->socket_.available(available_ec) == 0 || available_ec)
                         self->Close();
                     });
}

void Connection::RunQuery() {
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

void Connection::OnWake(uint64_t generation) {
  if (!query_ || generation != wake_generation_) return;
  watch_id_.reset();  // fired watches are gone from the store
  RunQuery();
}

void Connection::CancelWatch() {
  if (watch_id_.has_value()) server_->store()->CancelWatch(*watch_id_);
  watch_id_.reset();
  ++wake_generation_;
}

void Connection::Finish(HttpResponse response) {
  CancelWatch();
  query_.reset();
  ++timer_generation_;
  timer_.cancel();
  Send(std::move(response));
}

void Connection::SendPlain(int status, absl::string_view text, bool close) {
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

void Connection::RefuseOversizedBody() {
  const auto& header = parser_->get();
  HttpRequest request;
  request.method = std::string(header.method_string());
  if (auto target = ParseTarget(std::string(header.target())); target.ok()) {
    request.path = std::move(target->first);
  }
  if (const boost::optional<uint64_t> length = parser_->content_length()) {
    request.content_length = *length;
  }
  std::optional<HttpResponse> refused = server_->api()->RefuseOversizedBody(request);
  if (!refused.has_value()) {
    return SendPlain(413, absl::StrCat("Request body too large, max size: ", kBodyLimit, " bytes"),
                     /*close=*/true);
  }
  request_ = std::move(request);  // Send() looks at the method
  reply_fault_ = FaultInjector::ReplyFault::kNone;
  linger_ = true;  // the client may still be sending the body
  Send(*std::move(refused));
}

void Connection::LingerThenClose() {
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  const uint64_t generation = ++timer_generation_;
  timer_.expires_after(std::chrono::seconds(1));
  timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
    if (!ec && generation == self->timer_generation_) self->Close();
  });
  Drain();
}

void Connection::Drain() {
  if (closed_) return;
  if (!scratch_) scratch_ = std::make_unique<std::array<char, 4096>>();
  socket_.async_read_some(asio::buffer(*scratch_),
                          [self = shared_from_this()](error_code ec, size_t) {
                            if (ec) return self->Close();
                            self->Drain();
                          });
}

void Connection::Send(HttpResponse response) {
  if (closed_) return;
  // Handled, but the client never hears of it, or hears a 500.
  if (reply_fault_ == FaultInjector::ReplyFault::kDrop) return Close();
  if (reply_fault_ == FaultInjector::ReplyFault::kServerError) {
    response = HttpResponse();
    response.status = 500;
    response.content_type = "text/plain; charset=utf-8";
    response.body = "leadership lost while committing log";
  }
  if (response.close_connection) keep_alive_ = false;
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

}  // namespace registry::devserver
