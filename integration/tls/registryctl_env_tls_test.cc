// SPDX-License-Identifier: Apache-2.0
// integration/tls/registryctl_env_tls_test.cc
//
// registryctl, a real host process loading the plugin, against a real agent on https only with
// client certificates required, configured by Consul's CLI environment alone (tools/ctl_env.h):
// CONSUL_HTTP_ADDR=https://..., CONSUL_CACERT, CONSUL_CLIENT_CERT, CONSUL_CLIENT_KEY; then
// CONSUL_HTTP_SSL with a bare address, CONSUL_TLS_SERVER_NAME (a name the certificate carries,
// with a port as Consul's client allows, and one it does not), CONSUL_HTTP_SSL_VERIFY=false
// without a CA, and a --config file's CA winning over CONSUL_CACERT. One agent for all of it.
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using ::testing::HasSubstr;
using Env = std::map<std::string, std::string>;

// registryctl `args` in this process's environment less its CONSUL_* variables, plus `env`.
RunResult Ctl(const Env& env, std::vector<std::string> args) {
  const std::vector<std::string> entries = EnvironmentWith("CONSUL_", env);
  args.insert(args.begin(), {REGISTRYCTL_BIN, "--namespace=ctl_env_tls"});
  return RunProcess(args, absl::Seconds(20), &entries);
}

TEST(RegistryctlEnvTlsTest, CertificatesAndCaFromTheEnvironmentAlone) {
  absl::StatusOr<std::unique_ptr<ConsulAgent>> started = ConsulAgent::Start(
      {.binary = ConsulBinary(CONSUL_BIN), .tls = true, .tls_server_names = kAllServerNames});
  ASSERT_TRUE(started.ok()) << started.status();
  const ConsulAgent& agent = **started;
  const TestPki& pki = agent.pki();
  const std::string address = agent.base_url().substr(std::string("https://").size());
  const Env client = {{"CONSUL_CLIENT_CERT", pki.client_cert},
                      {"CONSUL_CLIENT_KEY", pki.client_key}};
  Env env = client;
  env["CONSUL_HTTP_ADDR"] = agent.base_url();
  env["CONSUL_CACERT"] = pki.ca_file;

  RunResult put = Ctl(env, {"put", "/metadata/db", "env-tls"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  // CONSUL_HTTP_SSL=true makes a bare address https; the name carried by the certificate, with
  // a port, is accepted.
  env["CONSUL_HTTP_ADDR"] = address;
  env["CONSUL_HTTP_SSL"] = "true";
  env["CONSUL_TLS_SERVER_NAME"] = "server.dc1.consul:8501";
  RunResult get = Ctl(env, {"get", "/metadata/db"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "env-tls\n");
  env["CONSUL_TLS_SERVER_NAME"] = "not-in.the.certificate";
  RunResult wrong_name = Ctl(env, {"get", "/metadata/db"});
  EXPECT_EQ(wrong_name.exit_code, 2);
  EXPECT_THAT(wrong_name.err, HasSubstr("does not carry the name 'not-in.the.certificate'"));
  // Without the client certificate the agent refuses the handshake.
  RunResult no_cert =
      Ctl({{"CONSUL_HTTP_ADDR", agent.base_url()}, {"CONSUL_CACERT", pki.ca_file}}, {"get", "/x"});
  EXPECT_EQ(no_cert.exit_code, 2);
  EXPECT_THAT(no_cert.err, HasSubstr("client certificate"));

  // No CA: the system store does not trust the test CA, unless verification is off.
  Env no_ca = client;
  no_ca["CONSUL_HTTP_ADDR"] = agent.base_url();
  RunResult untrusted = Ctl(no_ca, {"get", "/metadata/db"});
  EXPECT_EQ(untrusted.exit_code, 2);
  EXPECT_THAT(untrusted.err, HasSubstr("not trusted"));
  no_ca["CONSUL_HTTP_SSL_VERIFY"] = "false";
  RunResult unverified = Ctl(no_ca, {"get", "/metadata/db"});
  EXPECT_EQ(unverified.exit_code, 0) << unverified.err;

  // A --config file's tlsCaFile wins over CONSUL_CACERT (here a file that is no CA).
  const std::string config = absl::StrCat(ProcessTempDir(), "/env_tls.yaml");
  std::ofstream(config) << "repository:\n  type: Consul\n  props:\n    namespace: ctl_env_tls\n"
                        << "    server-lists: " << agent.base_url() << "\n"
                        << "    tlsCaFile: " << pki.ca_file << "\n"
                        << "    tlsCertFile: " << pki.client_cert << "\n"
                        << "    tlsKeyFile: " << pki.client_key << "\n";
  RunResult config_over_env =
      Ctl({{"CONSUL_CACERT", pki.client_cert}}, {"--config=" + config, "get", "/metadata/db"});
  EXPECT_EQ(config_over_env.exit_code, 0) << config_over_env.err;
}

}  // namespace
}  // namespace registry::integration
