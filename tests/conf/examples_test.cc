// SPDX-License-Identifier: Apache-2.0
// tests/conf/examples_test.cc
//
// Every example under conf/examples/ must load: they are documentation that is checked. The
// repository ships no token, key or certificate (conf/examples/README.md says how to make them),
// so each test loads the examples from a copy with placeholder files beside them.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "conf/registry_config.h"
#include "gtest/gtest.h"

namespace registry::conf {
namespace {

// The files secure.yaml names, which a deployment makes (conf/examples/README.md).
constexpr const char* kSecretFiles[] = {"example.token", "example-ca.pem", "example-client.pem",
                                        "example-client.key"};

// A copy of conf/examples/ with a placeholder for each of kSecretFiles, in a directory of its
// own (ctest runs the tests of this file as concurrent processes), removed with the object.
class ExamplesWithPlaceholders {
 public:
  ExamplesWithPlaceholders() : dir_(testing::TempDir() + "conf-examples-XXXXXX") {
    EXPECT_NE(mkdtemp(dir_.data()), nullptr) << dir_;
    const std::filesystem::path dir = dir_;
    for (const auto& entry : std::filesystem::directory_iterator(REGISTRY_CONF_EXAMPLES_DIR)) {
      if (entry.path().extension() == ".yaml") {
        std::filesystem::copy_file(entry.path(), dir / entry.path().filename());
      }
    }
    for (const char* name : kSecretFiles) {
      EXPECT_FALSE(
          std::filesystem::exists(std::filesystem::path(REGISTRY_CONF_EXAMPLES_DIR) / name))
          << name << " must not be in the repository: conf/examples/README.md says how to make it";
      std::ofstream(dir / name) << "6f1c2b9e-0000-4000-8000-000000000000\n";
    }
  }
  ~ExamplesWithPlaceholders() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

std::vector<std::string> ExampleFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  return files;
}

TEST(ExamplesTest, EveryExampleFileLoads) {
  const ExamplesWithPlaceholders examples;
  std::vector<std::string> files = ExampleFiles(examples.dir());
  EXPECT_GE(files.size(), 3u);
  for (const std::string& file : files) {
    absl::StatusOr<RegistryConfig> config = LoadRegistryYamlFile(file);
    ASSERT_TRUE(config.ok()) << file << ": " << config.status();
    EXPECT_TRUE(IsConsulType(config->repository_type)) << file;
  }
}

TEST(ExamplesTest, SecureExampleReadsItsTokenFileAndCaNextToIt) {
  const ExamplesWithPlaceholders examples;
  const std::string& dir = examples.dir();
  absl::StatusOr<RegistryConfig> config = LoadRegistryYamlFile(dir + "/secure.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token, "6f1c2b9e-0000-4000-8000-000000000000");
  EXPECT_EQ(config->tls_ca_file, dir + "/example-ca.pem");
  EXPECT_EQ(config->tls_cert_file, dir + "/example-client.pem");
  EXPECT_EQ(config->tls_key_file, dir + "/example-client.key");
  EXPECT_EQ(config->tls_server_name, "server.dc1.consul");
  EXPECT_EQ(config->log_level, LogLevel::kInfo);
  EXPECT_EQ(config->block_query_wait, absl::Milliseconds(1500));
  EXPECT_TRUE(config->overwrite);
}

}  // namespace
}  // namespace registry::conf
