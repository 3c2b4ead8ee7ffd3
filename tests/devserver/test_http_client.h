// SPDX-License-Identifier: Apache-2.0
// tests/devserver/test_http_client.h
//
// A tiny synchronous HTTP client for the dev server's HTTP-level tests (libcurl easy, one
// kept-alive connection per client), plus a raw-socket exchange for requests no HTTP library
// would send. Independent of the project's own Consul client on purpose.
//
// Thread safety: a TestHttpClient is used by one thread at a time; RawExchange is reentrant.
#ifndef TESTS_DEVSERVER_TEST_HTTP_CLIENT_H_
#define TESTS_DEVSERVER_TEST_HTTP_CLIENT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace registry::devserver::testing {

struct TestResponse {
  long status = 0;    // 0 when the transfer failed (connection closed without reply, timeout)
  std::string error;  // curl's message when status == 0
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  // The header's value, or "" if absent.
  std::string Header(const std::string& lower_name) const;
  // The body parsed as JSON (a discarded value if it is not JSON).
  nlohmann::json Json() const;
};

class TestHttpClient {
 public:
  // `base` is "http://host:port"; every request times out after `timeout`.
  explicit TestHttpClient(std::string base, absl::Duration timeout = absl::Seconds(30));
  ~TestHttpClient();
  TestHttpClient(const TestHttpClient&) = delete;
  TestHttpClient& operator=(const TestHttpClient&) = delete;

  TestResponse Get(const std::string& path_and_query);
  TestResponse Put(const std::string& path_and_query, const std::string& body = "");
  TestResponse Delete(const std::string& path_and_query);
  // Any method, with extra "Name: value" headers.
  TestResponse Do(const std::string& method, const std::string& path_and_query,
                  const std::string& body = "", const std::vector<std::string>& headers = {});

 private:
  std::string base_;
  absl::Duration timeout_;
  void* curl_;  // CURL*, reused so the connection is kept alive
};

// One TCP connection to 127.0.0.1:`port`, written and read byte for byte.
class RawConnection {
 public:
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // Sends all of `bytes` (false if the connection broke).
  bool Send(const std::string& bytes);
  // Everything received until the server closes the connection (then `closed`) or `timeout`
  // passes, or until `enough` bytes arrived (0: no such limit).
  struct Received {
    std::string bytes;
    bool closed = false;
  };
  Received Receive(absl::Duration timeout, size_t enough = 0);

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// Connects to 127.0.0.1:`port`, sends `bytes`, and returns everything received until the
// server closes the connection or `timeout` passes.
std::string RawExchange(int port, const std::string& bytes,
                        absl::Duration timeout = absl::Seconds(5));

}  // namespace registry::devserver::testing

#endif  // TESTS_DEVSERVER_TEST_HTTP_CLIENT_H_
