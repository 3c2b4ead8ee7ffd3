// integration/testing/dev_server_test.h
//
// The common base of the in-process integration suites (repository, watch, lock): a fresh
// consul-dev-server in this process for every test (loopback, port 0, sessions down to 1 s,
// fault injection on) and a raw Consul client to it, for arranging and inspecting server state
// behind the code under test.
//
// Thread safety: the fixture is used by the test's thread; server() and raw() are thread-safe.
#ifndef INTEGRATION_TESTING_DEV_SERVER_TEST_H_
#define INTEGRATION_TESTING_DEV_SERVER_TEST_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "integration/devserver/dev_server.h"
#include "registry/consul/client.h"

namespace registry::testing {

// How long a test waits for something that should happen promptly before it fails.
inline constexpr absl::Duration kPatience = absl::Seconds(15);

class DevServerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Stops the dev server and starts an empty one on the same address (a server restart).
  void RestartServer();

  // The session holding Consul key `consul_key`: "" if the key is not held, nullopt if it is
  // absent. A failed read fails the test and returns nullopt.
  std::optional<std::string> KeySession(const std::string& consul_key);

  devserver::DevServer& server() { return *server_; }
  consul::Client& raw() { return *raw_; }
  const std::string& address() const { return address_; }

 private:
  static devserver::ServerOptions ServerOptions(const std::string& http_addr);

  std::unique_ptr<devserver::DevServer> server_;
  std::unique_ptr<consul::Client> raw_;
  std::string address_;  // "127.0.0.1:PORT", kept across RestartServer()
};

// Polls `condition` every 10 ms until it holds or `timeout` passes; the last check is made at
// the deadline. For state with no change notification (a server's view, a process table).
bool Eventually(const std::function<bool()>& condition, absl::Duration timeout = kPatience);

}  // namespace registry::testing

#endif  // INTEGRATION_TESTING_DEV_SERVER_TEST_H_
