// tests/conf/examples_test.cc
//
// Every example under conf/examples/ must load: they are documentation that is checked.
#include <filesystem>
#include <string>
#include <vector>

#include "conf/registry_config.h"
#include "gtest/gtest.h"

namespace registry::conf {
namespace {

std::vector<std::string> ExampleFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(REGISTRY_CONF_EXAMPLES_DIR)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  return files;
}

TEST(ExamplesTest, EveryExampleFileLoads) {
  std::vector<std::string> files = ExampleFiles();
  EXPECT_GE(files.size(), 3u);
  for (const std::string& file : files) {
    absl::StatusOr<RegistryConfig> config = LoadRegistryYamlFile(file);
    ASSERT_TRUE(config.ok()) << file << ": " << config.status();
    EXPECT_TRUE(IsConsulType(config->repository_type)) << file;
  }
}

TEST(ExamplesTest, SecureExampleReadsItsTokenFileAndCaNextToIt) {
  absl::StatusOr<RegistryConfig> config =
      LoadRegistryYamlFile(std::string(REGISTRY_CONF_EXAMPLES_DIR) + "/secure.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->token.empty());
  EXPECT_EQ(config->tls_ca_file, std::string(REGISTRY_CONF_EXAMPLES_DIR) + "/example-ca.pem");
  EXPECT_EQ(config->tls_cert_file, std::string(REGISTRY_CONF_EXAMPLES_DIR) + "/example-client.pem");
  EXPECT_EQ(config->tls_key_file, std::string(REGISTRY_CONF_EXAMPLES_DIR) + "/example-client.key");
  EXPECT_EQ(config->tls_server_name, "server.dc1.consul");
  EXPECT_EQ(config->log_level, LogLevel::kInfo);
  EXPECT_EQ(config->block_query_wait, absl::Milliseconds(1500));
  EXPECT_TRUE(config->overwrite);
}

}  // namespace
}  // namespace registry::conf
