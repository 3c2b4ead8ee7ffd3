// SPDX-License-Identifier: Apache-2.0
// integration/testing/server_process_test.h
//
// The base of suites whose tests share one server process, of the kind $REGISTRY_TEST_SERVER
// names (integration/testing/server_kind.h): a consul-dev-server process (sessions down to 1 s,
// fault injection on) or a real consul agent, with or without ACLs. Started before the suite's
// first test, killed and reaped after its last. Tests keep apart by working in namespaces of
// their own. The including target defines REGISTRY_DEVSERVER_BIN, the consul-dev-server's path.
#ifndef INTEGRATION_TESTING_SERVER_PROCESS_TEST_H_
#define INTEGRATION_TESTING_SERVER_PROCESS_TEST_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/server_kind.h"
#include "integration/testing/test_pki.h"

namespace registry::integration {

class ServerProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<ServerKind> kind = ServerKindFromEnv();
    ASSERT_TRUE(kind.ok()) << kind.status();
    auto server = std::make_unique<Server>();
    server->kind = *kind;
    if (*kind == ServerKind::kDevServer) {
      absl::StatusOr<DevServerProcess> dev = StartDevServer(
          REGISTRY_DEVSERVER_BIN, {"--session-ttl-min=1s", "--enable-fault-injection"});
      ASSERT_TRUE(dev.ok()) << dev.status();
      server->address = dev->address;
      server->dev = *std::move(dev);
    } else {
      absl::StatusOr<RealConsul> consul = StartRealConsul(*kind);
      ASSERT_TRUE(consul.ok()) << consul.status();
      server->address = consul->address;
      server->token = consul->token;
      server->admin_token = consul->admin_token;
      server->agent = std::move(consul->agent);
    }
    server_ = server.release();
  }
  static void TearDownTestSuite() {
    delete server_;  // SIGKILL + reap
    server_ = nullptr;
  }

  // Fails the test when the suite's server did not start.
  void SetUp() override { ASSERT_NE(server_, nullptr) << "the server did not start"; }
  // A failing test keeps the agent's log and prints its tail.
  void TearDown() override {
    if (server_ != nullptr && server_->agent != nullptr && HasFailure()) {
      server_->agent->KeepFilesAndPrintLog();
    }
  }

  // "127.0.0.1:PORT" of the suite's server.
  static const std::string& server_address() { return server_->address; }
  // The ACL token for the code under test ("" without ACLs).
  static const std::string& token() { return server_->token; }
  static bool real_consul() { return server_->kind != ServerKind::kDevServer; }
  static ServerKind kind() { return server_->kind; }
  // The master token, for the test's own inspection ("" without ACLs).
  static const std::string& admin_token() { return server_->admin_token; }
  // consul-tls: the CA and the client certificate the code under test connects with (the
  // server answers on https:// only); null for the other kinds.
  static const TestPki* tls_pki() {
    if (server_->kind != ServerKind::kConsulTls || server_->agent == nullptr) return nullptr;
    return &server_->agent->pki();
  }

  // The session holding Consul key `consul_key`, "" if the key is absent or not held.
  static absl::StatusOr<std::string> KeySession(absl::string_view consul_key) {
    return integration::KeySession(server_->address, consul_key, server_->admin_token);
  }
  // The keys under Consul prefix `prefix` (e.g. "ns/semaphore/name/"), as ListPrefix lists them.
  static absl::StatusOr<std::vector<ListedKey>> KeysUnder(absl::string_view prefix) {
    return ListPrefix(server_->address, prefix, server_->admin_token);
  }
  // Ends session `id` as its TTL running out would (on real Consul: a destroy, which
  // invalidates it the same way).
  static absl::Status ExpireSession(const std::string& id) {
    if (!real_consul()) return DevControl(server_->address, "/v1/_dev/session/expire/" + id);
    absl::StatusOr<HttpReply> reply =
        HttpCall("PUT", absl::StrCat("http://", server_->address, "/v1/session/destroy/", id),
                 absl::Seconds(5), "", server_->admin_token);
    if (!reply.ok()) return reply.status();
    if (reply->status == 200) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("destroy session ", id, ": ", reply->status));
  }

 private:
  struct Server {
    ServerKind kind = ServerKind::kDevServer;
    DevServerProcess dev;                // kDevServer
    std::unique_ptr<ConsulAgent> agent;  // a real agent this suite started
    std::string address;
    std::string token;        // for the code under test
    std::string admin_token;  // for the test's own inspection
  };
  inline static Server* server_ = nullptr;
};

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_SERVER_PROCESS_TEST_H_
