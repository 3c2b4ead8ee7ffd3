// SPDX-License-Identifier: Apache-2.0
// integration/java/shardingsphere_bridge_test.cc
//
// Runs the JUnit tests of the ShardingSphere bridge (plugin/java/shared/src/test and the version
// module's src/test) against the suite's server, on one ShardingSphere version
// (REGISTRY_SHARDINGSPHERE_VERSION, built once per version as suite REGISTRY_BRIDGE_SUITE): one
// JVM per JUnit class, started with JUnit's console launcher on that version's real ShardingSphere
// jars, the server handed over as system properties (registry.test.*, read by TestServer.java). A
// test passes when the JVM exits 0; on failure it prints everything the JVM printed (JUnit's tree
// names the failing method and its assertion). One ctest entry per class keeps a failure's report
// short and lets ctest time each class on its own.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "integration/testing/server_kind.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

// Below the ctest TIMEOUT (180 s), so that a hung JVM is reported with its output rather than
// killed by ctest without a word.
constexpr absl::Duration kJvmTimeout = absl::Seconds(150);

// The JVM's class path: what Maven resolved for the version (a file it wrote at build time: one
// line, ':'-separated), then the tests' classes and the bridge jar.
std::string JavaClassPath() {
  static const std::string* const class_path = [] {
    std::ifstream in(REGISTRY_JAVA_CLASS_PATH_FILE);
    std::string resolved;
    // Unreadable: empty, which RunJUnitClass reports, naming the file.
    if (!std::getline(in, resolved) || resolved.empty()) return new std::string();
    return new std::string(absl::StrCat(resolved, ":", REGISTRY_JAVA_EXTRA_CLASS_PATH));
  }();
  return *class_path;
}

class REGISTRY_BRIDGE_SUITE : public ServerProcessTest {
 protected:
  // The JVM's command line for JUnit class `test_class` (of org.example.registryconsul.
  // shardingsphere.test, unless the name has a package).
  static std::vector<std::string> JUnitCommand(const std::string& test_class) {
    std::vector<std::string> argv = {REGISTRY_JAVA,
                                     absl::StrCat("-Djava.library.path=", REGISTRY_JNI_DIR)};
    const TestPki* pki = tls_pki();
    auto property = [&argv](const std::string& name, const std::string& value) {
      argv.push_back(absl::StrCat("-Dregistry.test.", name, "=", value));
    };
    property("kind", std::string(ServerKindName(kind())));
    property("shardingsphereVersion", REGISTRY_SHARDINGSPHERE_VERSION);
    property("bridgeJar", REGISTRY_BRIDGE_JAR);
    property("otherBridgeJar", REGISTRY_OTHER_BRIDGE_JAR);
    property("serverLists",
             pki != nullptr ? absl::StrCat("https://", server_address()) : server_address());
    if (!token().empty()) property("token", token());
    if (!admin_token().empty()) property("adminToken", admin_token());
    if (pki != nullptr) {
      property("tlsCaFile", pki->ca_file);
      property("tlsCertFile", pki->client_cert);
      property("tlsKeyFile", pki->client_key);
    }
    argv.insert(argv.end(), {"-cp", JavaClassPath(), "org.junit.platform.console.ConsoleLauncher",
                             "--disable-banner", "--disable-ansi-colors", "--details=tree",
                             "--fail-if-no-tests", "--select-class",
                             absl::StrContains(test_class, '.')
                                 ? test_class
                                 : "org.example.registryconsul.shardingsphere.test." + test_class});
    return argv;
  }

  static void RunJUnitClass(const std::string& test_class) {
    ASSERT_FALSE(JavaClassPath().empty())
        << "no class path in " << REGISTRY_JAVA_CLASS_PATH_FILE << " (Maven writes it when it "
        << "builds the bridge: cmake --build build --target registry_consul_shardingsphere)";
    const absl::Time start = absl::Now();
    RunResult run = RunProcess(JUnitCommand(test_class), kJvmTimeout);
    const std::string printed =
        absl::StrCat("--- JVM stdout ---\n", run.out, "--- JVM stderr ---\n", run.err);
    ASSERT_NE(run.exit_code, -1) << test_class << " did not finish within " << kJvmTimeout << "\n"
                                 << printed;
    EXPECT_EQ(run.exit_code, 0) << test_class << " failed (exit code " << run.exit_code
                                << ", JUnit: 1 a test failed, 2 no test found; 128+N signal N, "
                                   "134 a JVM abort)\n"
                                << printed;
    // JUnit's counts (and the figures tests print), so that a passing log shows what ran.
    for (absl::string_view line : absl::StrSplit(run.out, '\n')) {
      if (absl::StrContains(line, "tests successful") || absl::StrContains(line, "tests skipped") ||
          absl::StartsWith(line, "figure: ")) {
        std::cout << line << "\n";
      }
    }
    std::cout << test_class << ": " << absl::ToInt64Milliseconds(absl::Now() - start)
              << " ms in the JVM" << std::endl;
  }
};

TEST_F(REGISTRY_BRIDGE_SUITE, DiscoveryAndProps) { RunJUnitClass("DiscoveryAndPropsTest"); }

TEST_F(REGISTRY_BRIDGE_SUITE, RepositoryContract) { RunJUnitClass("RepositoryContractTest"); }

TEST_F(REGISTRY_BRIDGE_SUITE, BadInput) { RunJUnitClass("BadInputTest"); }

// Servers of the test's own (a silent one, an endless answer) and the temporary directory: the
// suite's server kind changes nothing, so they run once per ShardingSphere version.
TEST_F(REGISTRY_BRIDGE_SUITE, HostileServers) {
  if (real_consul()) GTEST_SKIP() << "the test's own servers: run on the dev server's pass only";
  RunJUnitClass("HostileServerTest");
}

TEST_F(REGISTRY_BRIDGE_SUITE, StaleNativeCopies) {
  if (real_consul()) GTEST_SKIP() << "no server involved: run on the dev server's pass only";
  RunJUnitClass("org.example.registryconsul.shardingsphere.NativeLibraryTest");
}

TEST_F(REGISTRY_BRIDGE_SUITE, WatchContract) { RunJUnitClass("WatchContractTest"); }

TEST_F(REGISTRY_BRIDGE_SUITE, LockContract) { RunJUnitClass("LockContractTest"); }

TEST_F(REGISTRY_BRIDGE_SUITE, ThreadLifecycle) { RunJUnitClass("ThreadLifecycleTest"); }

TEST_F(REGISTRY_BRIDGE_SUITE, TwoJvms) { RunJUnitClass("TwoJvmTest"); }

TEST_F(REGISTRY_BRIDGE_SUITE, HostVersion) { RunJUnitClass("HostVersionTest"); }

TEST_F(REGISTRY_BRIDGE_SUITE, SessionLoss) { RunJUnitClass("SessionLossTest"); }

#ifdef REGISTRY_JDBC_CLUSTER_TEST
TEST_F(REGISTRY_BRIDGE_SUITE, JdbcCluster) { RunJUnitClass("JdbcClusterTest"); }
#endif

}  // namespace
}  // namespace registry::integration
