// SPDX-License-Identifier: Apache-2.0
// integration/testing/server_test.h
//
// The common base of the in-process integration suites (repository, watch, lock): a fresh server
// for every test, of the kind $REGISTRY_TEST_SERVER names (integration/testing/server_kind.h: the
// dev server in this process, or a real consul agent with or without ACLs), and a raw Consul
// client to it with every right, for arranging and inspecting server state behind the code under
// test.
//
// Thread safety: the fixture is used by the test's thread; server() and raw() are thread-safe.
#ifndef INTEGRATION_TESTING_SERVER_TEST_H_
#define INTEGRATION_TESTING_SERVER_TEST_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "consul/client.h"
#include "devserver/dev_server.h"
#include "gtest/gtest.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/eventually.h"  // kPatience, Eventually: for the suites
#include "integration/testing/server_kind.h"

namespace registry::testing {

using integration::ServerKind;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Stops the server and starts an empty one on the same address (a server restart). Not
  // available for an external agent (fails the test).
  void RestartServer();

  // The session holding Consul key `consul_key`: "" if the key is not held, nullopt if it is
  // absent. A failed read fails the test and returns nullopt.
  std::optional<std::string> KeySession(const std::string& consul_key);

  // Ends session `id` as its TTL running out would: its locks are released (behaviour
  // "release") or its keys deleted ("delete"), and its lock-delay starts. Real Consul: a
  // destroy, which invalidates the session the same way.
  absl::Status ExpireSession(const std::string& id);

  ServerKind kind() const { return kind_; }
  bool real_consul() const { return kind_ != ServerKind::kDevServer; }
  // False for an external agent: it has been wiped, but its indexes keep their history.
  bool fresh_server() const { return !external_; }
  // The ACL token for the code under test ("" without ACLs).
  const std::string& token() const { return token_; }
  // What the code under test connects with: the server (https:// for consul-tls), its token and,
  // for consul-tls, the CA and the client certificate.
  consul::ClientOptions ClientOptionsForCodeUnderTest() const;
  // The in-process dev server. Only for suites that need it (fault injection, request counts):
  // they derive from DevServerOnly and are named *FaultsTest, which CMake does not register for
  // real Consul. Calling it on real Consul aborts the test binary, naming the test.
  devserver::DevServer& server();
  consul::Client& raw() { return *raw_; }
  const std::string& address() const { return address_; }

 private:
  static devserver::ServerOptions DevServerOptions(const std::string& http_addr);
  void StartConsul(bool acl);
  // Deletes every key and session of the external agent (see above).
  void WipeExternal(const std::string& admin_token);

  ServerKind kind_ = ServerKind::kDevServer;
  std::unique_ptr<devserver::DevServer> server_;     // kDevServer
  std::unique_ptr<integration::ConsulAgent> agent_;  // a real agent this test started
  std::unique_ptr<consul::Client> raw_;
  std::string address_;  // "127.0.0.1:PORT", kept across RestartServer()
  std::string token_;
  consul::ClientOptions tls_;  // consul-tls: servers "https://..." and the certificate files
  bool external_ = false;      // $REGISTRY_TEST_CONSUL_ADDR
};

// The base of tests that need the dev server's fault injection or introspection. Their suites
// are named *FaultsTest (CMake registers them for the dev server only); run on real Consul by
// hand, each is skipped saying why.
template <typename Base>
class DevServerOnly : public Base {
 protected:
  void SetUp() override {
    if (integration::ServerKindFromEnv().value_or(ServerKind::kDevServer) !=
        ServerKind::kDevServer) {
      GTEST_SKIP() << "needs the dev server's fault injection or request counts";
    }
    Base::SetUp();
  }
};

// Threads of this process, from /proc/self/status; -1 if unreadable.
int ProcessThreadCount();

}  // namespace registry::testing

#endif  // INTEGRATION_TESTING_SERVER_TEST_H_
