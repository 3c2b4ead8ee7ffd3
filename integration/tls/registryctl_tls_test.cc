// SPDX-License-Identifier: Apache-2.0
// integration/tls/registryctl_tls_test.cc
//
// registryctl, a real host process loading the plugin, against a real agent on https only with
// client certificates required: the TLS props of a --config file are all it needs, and a config
// without the client certificate fails naming the server.
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using ::testing::HasSubstr;

class RegistryctlTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ConsulAgent>> agent = ConsulAgent::Start(
        {.binary = ConsulBinary(CONSUL_BIN), .tls = true, .tls_server_names = kAllServerNames});
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = agent->release();
  }
  static void TearDownTestSuite() {
    delete agent_;
    agent_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(agent_, nullptr); }

  // A registry YAML for the agent; without `client_certificate` it lacks tlsCertFile/tlsKeyFile.
  static std::string WriteConfig(const std::string& name, bool client_certificate) {
    const std::string path = absl::StrCat(ProcessTempDir(), "/", name, ".yaml");
    std::ofstream file(path);
    file << "mode:\n  type: Cluster\n  repository:\n    type: Consul\n    props:\n"
         << "      namespace: ctl_tls\n"
         << "      server-lists: " << agent_->base_url() << "\n"
         << "      tlsCaFile: " << agent_->pki().ca_file << "\n"
         << "      requestTimeoutMilliseconds: 5000\n";
    if (client_certificate) {
      file << "      tlsCertFile: " << agent_->pki().client_cert << "\n"
           << "      tlsKeyFile: " << agent_->pki().client_key << "\n";
    }
    return path;
  }

  static RunResult Ctl(const std::string& config, std::vector<std::string> args) {
    args.insert(args.begin(), {REGISTRYCTL_BIN, "--config=" + config});
    return RunProcess(args);
  }

  static ConsulAgent* agent_;
};

ConsulAgent* RegistryctlTlsTest::agent_ = nullptr;

TEST_F(RegistryctlTlsTest, PutGetAndStatsWorkOverHttpsWithAClientCertificate) {
  const std::string config = WriteConfig("good", /*client_certificate=*/true);
  RunResult put = Ctl(config, {"put", "/metadata/db", "over-tls"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  RunResult get = Ctl(config, {"get", "/metadata/db"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "over-tls\n");
  RunResult stats = Ctl(config, {"stats"});
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_THAT(stats.out,
              HasSubstr("registry_consul_requests_total{endpoint=\"kv\",outcome=\"ok\"} 1\n"));
}

TEST_F(RegistryctlTlsTest, AConfigWithoutTheClientCertificateExitsTwoNamingTheServer) {
  const std::string config = WriteConfig("no_client_cert", /*client_certificate=*/false);
  RunResult get = Ctl(config, {"get", "/metadata/db"});
  EXPECT_EQ(get.exit_code, 2);
  EXPECT_THAT(get.err, HasSubstr(agent_->base_url()));
  EXPECT_THAT(get.err, HasSubstr("client certificate"));
}

}  // namespace
}  // namespace registry::integration
