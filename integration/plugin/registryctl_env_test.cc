// SPDX-License-Identifier: Apache-2.0
// integration/plugin/registryctl_env_test.cc
//
// registryctl as real processes reading Consul's CLI environment (tools/ctl_env.h): the variables
// alone reach the server (every server kind, the token from CONSUL_HTTP_TOKEN_FILE or
// CONSUL_HTTP_TOKEN on the ACL agent); the order flags, --config, environment, defaults, for the
// address and for the token (a dev server requiring its master token); bad values are usage
// errors naming the variable, never showing a token. Over TLS: integration/tls.
// Each child gets an environment without the developer's own CONSUL_* variables.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Env = std::map<std::string, std::string>;

// A port nothing listens on: connecting there fails at once.
constexpr char kClosedAddress[] = "127.0.0.1:1";

class RegistryctlEnvTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    ServerProcessTest::SetUp();
    namespace_ =
        absl::StrCat("env_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // registryctl `args` with --namespace of this test, in this process's environment less its
  // CONSUL_* variables, plus `env`.
  RunResult Ctl(const Env& env, std::vector<std::string> args) const {
    const std::vector<std::string> entries = EnvironmentWith("CONSUL_", env);
    args.insert(args.begin(), {REGISTRYCTL_BIN, "--namespace=" + namespace_});
    return RunProcess(args, absl::Seconds(20), &entries);
  }

  static std::string WriteFile(const std::string& name, const std::string& content) {
    const std::string path = absl::StrCat(ProcessTempDir(), "/", name);
    std::ofstream(path) << content;
    return path;
  }

  // A registry YAML for `servers`, with `extra` props lines ("      key: value\n").
  std::string WriteConfig(const std::string& name, const std::string& servers,
                          const std::string& extra = "") const {
    return WriteFile(absl::StrCat(name, ".yaml"),
                     absl::StrCat("mode:\n  type: Cluster\n  repository:\n    type: Consul\n"
                                  "    props:\n      namespace: ",
                                  namespace_, "\n      server-lists: ", servers,
                                  "\n      requestTimeoutMilliseconds: 2000\n", extra));
  }

  std::string namespace_;
};

TEST_F(RegistryctlEnvTest, TheEnvironmentAloneReachesTheServer) {
  Env env = {{"CONSUL_HTTP_ADDR", absl::StrCat("http://", server_address())}};
  if (!token().empty()) {
    env["CONSUL_HTTP_TOKEN_FILE"] = WriteFile("env.token", token() + "\n");
  }
  RunResult put = Ctl(env, {"put", "/metadata/db", "from-env"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  if (!token().empty()) {  // the same through CONSUL_HTTP_TOKEN
    env.erase("CONSUL_HTTP_TOKEN_FILE");
    env["CONSUL_HTTP_TOKEN"] = token();
  }
  env["CONSUL_HTTP_ADDR"] = server_address();  // without a scheme: http
  RunResult get = Ctl(env, {"get", "/metadata/db"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "from-env\n");
}

TEST_F(RegistryctlEnvTest, TheAddressComesFromFlagsThenConfigThenEnvironmentThenDefault) {
  // Each run's higher source names the server and every lower one a closed port (or, for the
  // environment under a file, a value that would be a usage error if it were read).
  ASSERT_EQ(Ctl({{"CONSUL_HTTP_ADDR", server_address()}}, {"put", "/k", "v"}).exit_code, 0)
      << "the environment over the default 127.0.0.1:8500";
  const std::string good = WriteConfig("good", server_address());
  RunResult config_over_env =
      Ctl({{"CONSUL_HTTP_ADDR", "ftp://not-read:1"}}, {"--config=" + good, "get", "/k"});
  EXPECT_EQ(config_over_env.exit_code, 0) << config_over_env.err;
  EXPECT_EQ(config_over_env.out, "v\n");
  const std::string closed = WriteConfig("closed", kClosedAddress);
  RunResult flag_over_config =
      Ctl({{"CONSUL_HTTP_ADDR", kClosedAddress}},
          {"--config=" + closed, "--servers=" + server_address(), "get", "/k"});
  EXPECT_EQ(flag_over_config.exit_code, 0) << flag_over_config.err;
  RunResult flag_over_env =
      Ctl({{"CONSUL_HTTP_ADDR", kClosedAddress}}, {"--servers=" + server_address(), "get", "/k"});
  EXPECT_EQ(flag_over_env.exit_code, 0) << flag_over_env.err;
}

TEST_F(RegistryctlEnvTest, TheTokenComesFromFlagsThenConfigThenEnvironment) {
  constexpr char kGood[] = "0b5e6c8a-good-token";
  constexpr char kWrong[] = "wrong-token-never-shown";
  absl::StatusOr<DevServerProcess> acl =
      StartDevServer(REGISTRY_DEVSERVER_BIN, {absl::StrCat("--acl-master-token=", kGood)});
  ASSERT_TRUE(acl.ok()) << acl.status();
  const std::string good_file = WriteFile("good.token", absl::StrCat("  ", kGood, "\n"));
  const std::string wrong_file = WriteFile("wrong.token", kWrong);
  const std::string addr = acl->address;
  const Env wrong_env = {{"CONSUL_HTTP_ADDR", addr}, {"CONSUL_HTTP_TOKEN", kWrong}};

  RunResult refused = Ctl(wrong_env, {"put", "/k", "v"});
  EXPECT_EQ(refused.exit_code, 2) << "the dev server must refuse the wrong token";
  EXPECT_THAT(refused.err, Not(HasSubstr(kWrong)));
  // The environment: CONSUL_HTTP_TOKEN_FILE wins over CONSUL_HTTP_TOKEN, as in Consul's client.
  RunResult env_file = Ctl({{"CONSUL_HTTP_ADDR", addr},
                            {"CONSUL_HTTP_TOKEN_FILE", good_file},
                            {"CONSUL_HTTP_TOKEN", kWrong}},
                           {"put", "/k", "v"});
  EXPECT_EQ(env_file.exit_code, 0) << env_file.err;
  EXPECT_EQ(Ctl({{"CONSUL_HTTP_ADDR", addr}, {"CONSUL_HTTP_TOKEN", kGood}}, {"get", "/k"}).out,
            "v\n");
  // The file over the environment.
  const std::string config = WriteConfig("acl", addr, absl::StrCat("      tokenFile: ", good_file));
  RunResult config_over_env = Ctl(wrong_env, {"--config=" + config, "get", "/k"});
  EXPECT_EQ(config_over_env.exit_code, 0) << config_over_env.err;
  // Flags over the file and the environment.
  const std::string wrong_config =
      WriteConfig("acl_wrong", addr, absl::StrCat("      tokenFile: ", wrong_file));
  RunResult flag_over_all =
      Ctl(wrong_env, {"--config=" + wrong_config, "--token-file=" + good_file, "get", "/k"});
  EXPECT_EQ(flag_over_all.exit_code, 0) << flag_over_all.err;
  RunResult flag_over_env = Ctl(wrong_env, {"--token-file", good_file, "get", "/k"});
  EXPECT_EQ(flag_over_env.exit_code, 0) << flag_over_env.err;
}

TEST_F(RegistryctlEnvTest, BadValuesAreUsageErrorsNamingTheVariableAndValue) {
  const std::string empty_file = WriteFile("empty.token", "\n");
  struct Case {
    Env env;
    std::vector<std::string> shown;  // in stderr
  };
  const std::vector<Case> cases = {
      {{{"CONSUL_HTTP_ADDR", "ftp://h:1"}}, {"CONSUL_HTTP_ADDR='ftp://h:1'", "scheme 'ftp'"}},
      {{{"CONSUL_HTTP_ADDR", "unix:///run/consul.sock"}}, {"CONSUL_HTTP_ADDR", "unix socket"}},
      {{{"CONSUL_HTTP_ADDR", "127.0.0.1"}}, {"CONSUL_HTTP_ADDR='127.0.0.1'", "no port"}},
      {{{"CONSUL_HTTP_ADDR", "a:1,b:2"}}, {"CONSUL_HTTP_ADDR='a:1,b:2'", "--servers"}},
      {{{"CONSUL_HTTP_SSL", "yes"}}, {"CONSUL_HTTP_SSL='yes'", "not a boolean"}},
      {{{"CONSUL_HTTP_ADDR", "https://127.0.0.1:1"}, {"CONSUL_HTTP_SSL_VERIFY", "nope"}},
       {"CONSUL_HTTP_SSL_VERIFY='nope'", "not a boolean"}},
      {{{"CONSUL_HTTP_TOKEN_FILE", "/nonexistent/token"}},
       {"CONSUL_HTTP_TOKEN_FILE='/nonexistent/token'", "cannot be read"}},
      {{{"CONSUL_HTTP_TOKEN_FILE", empty_file}}, {"CONSUL_HTTP_TOKEN_FILE", "empty"}},
      {{{"CONSUL_HTTP_TOKEN", "has space-secret"}}, {"CONSUL_HTTP_TOKEN='<not shown>'"}},
      {{{"CONSUL_HTTP_ADDR", "https://127.0.0.1:1"}, {"CONSUL_CACERT", "/nonexistent/ca.pem"}},
       {"CONSUL_CACERT='/nonexistent/ca.pem'", "cannot be read"}},
      {{{"CONSUL_HTTP_ADDR", "https://127.0.0.1:1"}, {"CONSUL_CAPATH", "/etc/ssl/certs"}},
       {"CONSUL_CAPATH='/etc/ssl/certs'", "CONSUL_CACERT"}},
      {{{"CONSUL_HTTP_ADDR", "https://127.0.0.1:1"}, {"CONSUL_CLIENT_CERT", "/c.pem"}},
       {"CONSUL_CLIENT_CERT='/c.pem'", "without CONSUL_CLIENT_KEY"}},
  };
  for (const Case& c : cases) {
    RunResult run = Ctl(c.env, {"get", "/k"});
    const std::string what = c.env.rbegin()->first;
    EXPECT_EQ(run.exit_code, 2) << what << ": " << run.err;
    for (const std::string& text : c.shown) EXPECT_THAT(run.err, HasSubstr(text)) << what;
    EXPECT_THAT(run.err, HasSubstr("see registryctl --help")) << what;
    EXPECT_THAT(run.err, Not(HasSubstr("secret"))) << "a token is never shown";
  }
  // A TLS variable is not read while no server uses https://, as Consul's client ignores it.
  RunResult http = Ctl({{"CONSUL_HTTP_ADDR", server_address()}, {"CONSUL_CACERT", "/nonexistent"}},
                       {"put", "/k", "v"});
  EXPECT_EQ(http.exit_code, 0) << http.err;
  RunResult both = Ctl({}, {"--token=a", "--token-file=/x", "get", "/k"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("'--token' and '--token-file' cannot be combined"));
}

TEST_F(RegistryctlEnvTest, HelpDocumentsTheVariablesAndTheOrder) {
  RunResult help = Ctl({}, {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* text :
       {"--token-file", "CONSUL_HTTP_ADDR", "CONSUL_HTTP_TOKEN_FILE", "CONSUL_HTTP_TOKEN",
        "CONSUL_CACERT", "CONSUL_CLIENT_CERT", "CONSUL_CLIENT_KEY", "CONSUL_TLS_SERVER_NAME",
        "CONSUL_HTTP_SSL_VERIFY", "a flag, the --config file, the environment"}) {
    EXPECT_THAT(help.out, HasSubstr(text));
  }
}

}  // namespace
}  // namespace registry::integration
