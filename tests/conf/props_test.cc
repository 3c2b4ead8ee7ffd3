// SPDX-License-Identifier: Apache-2.0
// tests/conf/props_test.cc
//
// The props-map entry point (C ABI) and the override helper (CLI flags).
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "conf/registry_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conf/error_matchers.h"
#include "tests/conf/yaml_fixture.h"

namespace registry::conf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Props = std::vector<std::pair<std::string, std::string>>;

RegistryConfig ValidConfig() {
  absl::StatusOr<RegistryConfig> config =
      ParseRegistryProps({{"namespace", "governance_ds"}, {"server-lists", "a:8500"}});
  EXPECT_TRUE(config.ok()) << config.status();
  return config.value_or(RegistryConfig());
}

TEST(RegistryPropsTest, PropsMapBuildsTheSameConfigAsTheYamlBlock) {
  absl::StatusOr<RegistryConfig> from_props = ParseRegistryProps({
      {"namespace", "governance_ds"},
      {"server-lists", "127.0.0.1:8500"},
      {"timeToLiveSeconds", "30s"},
      {"blockQueryTimeToSeconds", "60"},
  });
  absl::StatusOr<RegistryConfig> from_yaml =
      ParseRegistryYaml(ClusterYaml("timeToLiveSeconds: 30s\nblockQueryTimeToSeconds: 60\n"));
  ASSERT_TRUE(from_props.ok()) << from_props.status();
  ASSERT_TRUE(from_yaml.ok()) << from_yaml.status();
  EXPECT_EQ(from_props->ToString(), from_yaml->ToString());
}

TEST(RegistryPropsTest, TypeDefaultsToConsulAndOverwriteToFalse) {
  RegistryConfig config = ValidConfig();
  EXPECT_EQ(config.repository_type, "Consul");
  EXPECT_FALSE(config.overwrite);
}

TEST(RegistryPropsTest, TypeAndOverwriteMayTravelInTheMap) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryProps(
      {{"type", "consul"}, {"overwrite", "true"}, {"namespace", "ds"}, {"server-lists", "a:1"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->repository_type, "consul");
  EXPECT_TRUE(config->overwrite);
}

TEST(RegistryPropsTest, ErrorsNameKeyAndValueWithoutALine) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryProps(
      {{"namespace", "ds"}, {"server-lists", "a:1"}, {"timeToLiveSeconds", "3x"}});
  EXPECT_TRUE(IsInvalid(config, {"timeToLiveSeconds: '3x' is not a duration"}));
  EXPECT_THAT(config.status().message(), Not(HasSubstr("line")));
}

TEST(RegistryPropsTest, UnknownKeyInTheMapIsRejectedWithASuggestion) {
  EXPECT_TRUE(IsInvalid(ParseRegistryProps({{"namespace", "ds"}, {"server-list", "a:1"}}),
                        {"unknown key 'server-list'", "did you mean 'server-lists'"}));
}

TEST(RegistryPropsTest, RepeatedKeyInTheMapIsRejected) {
  EXPECT_TRUE(IsInvalid(
      ParseRegistryProps({{"namespace", "ds"}, {"namespace", "other"}, {"server-lists", "a:1"}}),
      {"namespace: 'other'", "twice"}));
}

TEST(RegistryPropsTest, RequiredKeysAreRequiredInTheMapToo) {
  EXPECT_TRUE(IsInvalid(ParseRegistryProps({{"server-lists", "a:1"}}), {"namespace", "missing"}));
  EXPECT_TRUE(IsInvalid(ParseRegistryProps({{"namespace", "ds"}}), {"server-lists", "missing"}));
}

TEST(RegistryPropsTest, EmptyTypeIsRejected) {
  EXPECT_TRUE(
      IsInvalid(ParseRegistryProps({{"type", " "}, {"namespace", "ds"}, {"server-lists", "a:1"}}),
                {"type: ' '", "empty"}));
}

TEST(ApplyOverrideTest, ServerListsFlagReplacesTheServers) {
  RegistryConfig config = ValidConfig();
  ASSERT_TRUE(ApplyOverride(&config, "server-lists", "b:8500, c:8500").ok());
  EXPECT_THAT(config.servers, ElementsAre("b:8500", "c:8500"));
}

TEST(ApplyOverrideTest, NamespaceFlagReplacesTheNamespace) {
  RegistryConfig config = ValidConfig();
  ASSERT_TRUE(ApplyOverride(&config, "namespace", "other_ds").ok());
  EXPECT_EQ(config.namespace_name, "other_ds");
}

TEST(ApplyOverrideTest, TokenFlagReplacesTheToken) {
  RegistryConfig config = ValidConfig();
  ASSERT_TRUE(ApplyOverride(&config, "token", "t1").ok());
  ASSERT_TRUE(ApplyOverride(&config, "token", "t2").ok());
  EXPECT_EQ(config.token, "t2");
}

TEST(ApplyOverrideTest, InvalidOverrideLeavesTheConfigUnchanged) {
  RegistryConfig config = ValidConfig();
  std::string before = config.ToString();
  EXPECT_TRUE(IsInvalid(ApplyOverride(&config, "server-lists", "a:8500,,b:8500"),
                        {"server-lists: 'a:8500,,b:8500'", "empty entry"}));
  EXPECT_TRUE(IsInvalid(ApplyOverride(&config, "namespace", "/ds"), {"namespace: '/ds'"}));
  EXPECT_TRUE(
      IsInvalid(ApplyOverride(&config, "timeToLiveSeconds", "-1"), {"timeToLiveSeconds: '-1'"}));
  EXPECT_EQ(config.ToString(), before);
}

TEST(ApplyOverrideTest, UnknownOverrideKeyIsRejectedWithASuggestion) {
  RegistryConfig config = ValidConfig();
  EXPECT_TRUE(IsInvalid(ApplyOverride(&config, "namespac", "x"),
                        {"unknown key 'namespac'", "did you mean 'namespace'"}));
}

TEST(ApplyOverrideTest, BlockQuerySecondsOverrideAppliesEvenAfterMilliseconds) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryProps(
      {{"namespace", "ds"}, {"server-lists", "a:1"}, {"blockQueryTimeMilliseconds", "250"}});
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(ApplyOverride(&*config, "blockQueryTimeToSeconds", "2").ok());
  EXPECT_EQ(config->block_query_wait, absl::Seconds(2));
}

TEST(RegistryConfigTest, StreamingAConfigShowsItsFieldsButNotTheToken) {
  RegistryConfig config = ValidConfig();
  config.token = "hidden-value";
  std::ostringstream out;
  out << config;
  EXPECT_THAT(out.str(), HasSubstr("namespace: governance_ds"));
  EXPECT_THAT(out.str(), HasSubstr("servers: [a:8500]"));
  EXPECT_THAT(out.str(), Not(HasSubstr("hidden-value")));
}

}  // namespace
}  // namespace registry::conf
