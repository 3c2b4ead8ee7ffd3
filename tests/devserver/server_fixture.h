// SPDX-License-Identifier: Apache-2.0
// tests/devserver/server_fixture.h
//
// Fixture for HTTP-level tests: a DevServer started in-process on 127.0.0.1:0 with 1 s
// minimum session TTL and fault injection on, and a kept-alive test client to it.
#ifndef TESTS_DEVSERVER_SERVER_FIXTURE_H_
#define TESTS_DEVSERVER_SERVER_FIXTURE_H_

#include <future>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "devserver/dev_server.h"
#include "devserver/store.h"
#include "gtest/gtest.h"
#include "integration/testing/eventually.h"
#include "tests/devserver/test_http_client.h"

namespace registry::devserver::testing {

using registry::testing::Eventually;

class DevServerTest : public ::testing::Test {
 protected:
  static ServerOptions DefaultOptions() {
    ServerOptions options;
    options.http_addr = "127.0.0.1:0";
    options.session_ttl_min = absl::Seconds(1);
    options.node_name = "test-node";
    options.enable_fault_injection = true;
    return options;
  }

  void SetUp() override { StartServer(DefaultOptions()); }

  void StartServer(const ServerOptions& options) {
    client_.reset();
    server_.reset();
    absl::StatusOr<std::unique_ptr<DevServer>> server = DevServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    client_ = NewClient();
  }

  std::string Base() const { return absl::StrCat("http://", server_->address()); }
  std::unique_ptr<TestHttpClient> NewClient() const {
    return std::make_unique<TestHttpClient>(Base());
  }

  // Waits until the store holds `count` watches, i.e. that many queries are parked.
  bool WaitForParkedQueries(size_t count) {
    return Eventually([&] { return server_->store().watch_count() == count; });
  }

  // Runs a GET on its own connection and thread; the future yields its response.
  std::future<TestResponse> AsyncGet(const std::string& path) {
    return std::async(std::launch::async, [base = Base(), path] {
      TestHttpClient client(base);
      return client.Get(path);
    });
  }

  // Creates a session from a JSON body and returns its id.
  std::string CreateSession(const std::string& body = "") {
    TestResponse response = client_->Put("/v1/session/create", body);
    EXPECT_EQ(response.status, 200) << response.body;
    return response.Json().value("ID", "");
  }

  std::unique_ptr<DevServer> server_;
  std::unique_ptr<TestHttpClient> client_;
};

}  // namespace registry::devserver::testing

#endif  // TESTS_DEVSERVER_SERVER_FIXTURE_H_
