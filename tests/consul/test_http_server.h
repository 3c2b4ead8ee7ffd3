// SPDX-License-Identifier: Apache-2.0
// tests/consul/test_http_server.h
//
// Loopback sockets for the real-libcurl tests: a tiny HTTP/1.1 responder that counts accepted
// connections and keeps them alive, a listener that never answers, and a port that refuses.
#ifndef TESTS_CONSUL_TEST_HTTP_SERVER_H_
#define TESTS_CONSUL_TEST_HTTP_SERVER_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "absl/time/time.h"

namespace registry::consul::testing {

// One parsed request as the responder saw it.
struct SeenRequest {
  std::string head;  // request line and headers, up to the blank line
  std::string body;
};

// Serves HTTP/1.1 on 127.0.0.1:<port 0> from one thread until destroyed. `handler` returns the
// full raw response bytes for each request; connections stay open for reuse unless the reply
// carries "Connection: close".
class TestHttpServer {
 public:
  using Handler = std::function<std::string(const SeenRequest&)>;
  explicit TestHttpServer(Handler handler);
  ~TestHttpServer();  // stops and joins the serving thread

  int port() const { return port_; }
  std::string base_url() const;
  int accepted_connections() const { return accepted_.load(); }

  // "HTTP/1.1 <status> X\r\n" + headers + Content-Length + body.
  static std::string Reply(int status, const std::string& body, const std::string& headers = "");
  // A handler's answer that makes the server die with the request read: the connection closes
  // without a reply byte, and so does the listening socket, so a reconnect is refused.
  static constexpr char kDieWithoutReply[] = "<die without reply>";

 private:
  void Serve();

  Handler handler_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

// A listening socket nobody accepts from: connects succeed (kernel backlog), requests are sent
// and never answered. Accept() takes the first pending connection and returns once `bytes` of
// request arrived, so a test knows the request is in flight.
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  int port() const { return port_; }
  std::string base_url() const;
  // Accepts one connection and reads until "\r\n\r\n" or `deadline`; true if a request arrived.
  bool AcceptRequest(absl::Time deadline);

 private:
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  int port_ = 0;
};

// A bound, non-listening socket: connecting to its port is refused.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  std::string base_url() const;

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace registry::consul::testing

#endif  // TESTS_CONSUL_TEST_HTTP_SERVER_H_
