// integration/testing/dev_server_process_test.h
//
// The base of suites whose tests share one consul-dev-server process (sessions down to 1 s,
// fault injection on): started before the suite's first test, killed and reaped after its last.
// Tests keep apart by working in namespaces of their own. The including target defines
// REGISTRY_DEVSERVER_BIN, the path of the consul-dev-server binary.
#ifndef INTEGRATION_TESTING_DEV_SERVER_PROCESS_TEST_H_
#define INTEGRATION_TESTING_DEV_SERVER_PROCESS_TEST_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "integration/testing/dev_control.h"

namespace registry::integration {

class DevServerProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<DevServerProcess> server = StartDevServer(
        REGISTRY_DEVSERVER_BIN, {"--session-ttl-min=1s", "--enable-fault-injection"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = new DevServerProcess(*std::move(server));
  }
  static void TearDownTestSuite() {
    delete server_;  // SIGKILL + reap
    server_ = nullptr;
  }

  // Fails the test when the suite's server did not start.
  void SetUp() override { ASSERT_NE(server_, nullptr) << "the dev server did not start"; }

  // "127.0.0.1:PORT" of the suite's server.
  static const std::string& server_address() { return server_->address; }

 private:
  inline static DevServerProcess* server_ = nullptr;
};

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_DEV_SERVER_PROCESS_TEST_H_
