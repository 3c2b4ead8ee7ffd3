// tests/conf/examples_test.cc
//
// Every example under conf/examples/ must load: they are documentation that is checked. The
// repository ships no token, key or certificate (conf/examples/README.md says how to make them),
// so each test loads the examples from a copy with placeholder files beside them.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "conf/registry_config.h"
#include "gtest/gtest.h"

namespace registry::conf {
namespace {

// The files secure.yaml names, which a deployment makes (conf/examples/README.md).
constexpr const char* kSecretFiles[] = {"example.token", "example-ca.pem", "example-client.pem",
                                        "example-client.key"};

// A copy of conf/examples/ with a placeholder for each of kSecretFiles; returns its path.
std::string ExamplesWithPlaceholders() {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "conf-examples";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& entry : std::filesystem::directory_iterator(REGISTRY_CONF_EXAMPLES_DIR)) {
    if (entry.path().extension() == ".yaml") {
      std::filesystem::copy_file(entry.path(), dir / entry.path().filename());
    }
  }
  for (const char* name : kSecretFiles) {
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(REGISTRY_CONF_EXAMPLES_DIR) / name))
        << name << " must not be in the repository: conf/examples/README.md says how to make it";
    std::ofstream(dir / name) << "6f1c2b9e-0000-4000-8000-000000000000\n";
  }
  return dir.string();
}

std::vector<std::string> ExampleFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  return files;
}

TEST(ExamplesTest, EveryExampleFileLoads) {
  std::vector<std::string> files = ExampleFiles(ExamplesWithPlaceholders());
  EXPECT_GE(files.size(), 3u);
  for (const std::string& file : files) {
    absl::StatusOr<RegistryConfig> config = LoadRegistryYamlFile(file);
    ASSERT_TRUE(config.ok()) << file << ": " << config.status();
    EXPECT_TRUE(IsConsulType(config->repository_type)) << file;
  }
}

TEST(ExamplesTest, SecureExampleReadsItsTokenFileAndCaNextToIt) {
  const std::string dir = ExamplesWithPlaceholders();
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
