// SPDX-License-Identifier: Apache-2.0
// tests/conf/yaml_test.cc
//
// The shape of the registry YAML: documents, mode, repository, props as blocks; defaults.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "conf/registry_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conf/error_matchers.h"
#include "tests/conf/scoped_temp_dir.h"
#include "tests/conf/yaml_fixture.h"

namespace registry::conf {
namespace {

using ::testing::ElementsAre;

TEST(RegistryYamlTest, ShardingSphereClusterBlockIsAcceptedUnchanged) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryYaml(
      "mode:\n"
      "  type: Cluster\n"
      "  repository:\n"
      "    type: Consul\n"
      "    props:\n"
      "      namespace: governance_ds\n"
      "      server-lists: 127.0.0.1:8500\n"
      "      timeToLiveSeconds: 30s        # \"30s\" or 30 (plain number = seconds)\n"
      "      blockQueryTimeToSeconds: 60\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->repository_type, "Consul");
  EXPECT_EQ(config->namespace_name, "governance_ds");
  EXPECT_THAT(config->servers, ElementsAre("127.0.0.1:8500"));
  EXPECT_EQ(config->session_ttl, absl::Seconds(30));
  EXPECT_EQ(config->block_query_wait, absl::Seconds(60));
}

TEST(RegistryYamlTest, OmittedPropsTakeTheirDocumentedDefaults) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryYaml(ClusterYaml());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->overwrite);
  EXPECT_EQ(config->session_ttl, absl::Seconds(30));
  EXPECT_EQ(config->block_query_wait, absl::Seconds(60));
  EXPECT_EQ(config->token, "");
  EXPECT_EQ(config->datacenter, "");
  EXPECT_EQ(config->tls_ca_file, "");
  EXPECT_TRUE(config->tls_verify);
  EXPECT_EQ(config->connect_timeout, absl::Milliseconds(5000));
  EXPECT_EQ(config->request_timeout, absl::Milliseconds(10000));
  EXPECT_EQ(config->session_lock_delay, absl::Milliseconds(15000));
  EXPECT_EQ(config->lock_retry, absl::Milliseconds(500));
}

TEST(RegistryYamlTest, RepositoryOnlyFileIsAccepted) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryYaml(
      "repository:\n"
      "  type: consul\n"
      "  props:\n"
      "    namespace: ds\n"
      "    server-lists: a:8500\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->repository_type, "consul");
  EXPECT_EQ(config->namespace_name, "ds");
}

TEST(RegistryYamlTest, ModeOverwriteIsExposed) {
  absl::StatusOr<RegistryConfig> config =
      ParseRegistryYaml("mode:\n  overwrite: true\n" + ClusterYaml().substr(6));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->overwrite);
}

TEST(RegistryYamlTest, ModeOverwriteMustBeABoolean) {
  EXPECT_TRUE(
      IsInvalid(ParseRegistryYaml("mode:\n  overwrite: sometimes\n" + ClusterYaml().substr(6)),
                {"mode.overwrite", "'sometimes'", "(line 2)"}));
}

TEST(RegistryYamlTest, RepositoryTypeIsKeptAsWrittenForTheHostToMatch) {
  std::string yaml = ClusterYaml();
  yaml.replace(yaml.find("type: Consul"), 12, "type: CONSUL");
  absl::StatusOr<RegistryConfig> config = ParseRegistryYaml(yaml);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->repository_type, "CONSUL");
  EXPECT_TRUE(IsConsulType(config->repository_type));
}

TEST(RegistryYamlTest, ConsulTypeMatchesInAnyLetterCaseOnly) {
  EXPECT_TRUE(IsConsulType("Consul"));
  EXPECT_TRUE(IsConsulType("consul"));
  EXPECT_TRUE(IsConsulType("cOnSuL"));
  EXPECT_FALSE(IsConsulType("ZooKeeper"));
  EXPECT_FALSE(IsConsulType("Consul "));
  EXPECT_FALSE(IsConsulType(""));
}

TEST(RegistryYamlTest, StandaloneModeIsRejectedBecauseOnlyClusterModeIsServed) {
  std::string yaml = ClusterYaml();
  yaml.replace(yaml.find("Cluster"), 7, "Standalone");
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(yaml),
                        {"mode.type", "'Standalone'", "cluster mode", "(line 2)"}));
}

TEST(RegistryYamlTest, MissingModeTypeIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("mode:\n" + ClusterYaml().substr(22)),
                        {"mode.type", "missing", "(line 1)"}));
}

TEST(RegistryYamlTest, MissingRepositoryTypeIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("repository:\n  props:\n    namespace: ds\n"),
                        {"repository.type", "missing", "(line 1)"}));
}

TEST(RegistryYamlTest, MissingRepositoryBlockIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("mode:\n  type: Cluster\n"),
                        {"mode.repository", "missing", "(line 1)"}));
}

TEST(RegistryYamlTest, UnknownModeKeyIsRejectedWithTheClosestKnownKey) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml() + "  overwrit: true\n"),
                        {"mode", "'overwrit'", "did you mean 'overwrite'", "(line 8)"}));
}

TEST(RegistryYamlTest, UnknownRepositoryKeyIsRejectedWithTheClosestKnownKey) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml() + "    prop: {}\n"),
                        {"mode.repository", "'prop'", "did you mean 'props'", "(line 8)"}));
}

TEST(RegistryYamlTest, UnknownPropIsRejectedWithTheClosestKnownKey) {
  EXPECT_TRUE(
      IsInvalid(ParseRegistryYaml(ClusterYaml("timeToLiveSecond: 30\n")),
                {"props", "'timeToLiveSecond'", "did you mean 'timeToLiveSeconds'", "(line 8)"}));
}

TEST(RegistryYamlTest, UnknownPropFarFromEveryKeyGetsNoSuggestion) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryYaml(ClusterYaml("xyzzy: 1\n"));
  EXPECT_TRUE(IsInvalid(config, {"unknown key 'xyzzy'", "(line 8)"}));
  EXPECT_EQ(config.status().message().find("did you mean"), absl::string_view::npos);
}

TEST(RegistryYamlTest, MapWhereAValueIsExpectedIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml("timeToLiveSeconds: {seconds: 30}\n")),
                        {"timeToLiveSeconds", "got a map", "(line 8)"}));
}

TEST(RegistryYamlTest, ListWhereAValueIsExpectedIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml("datacenter: [dc1, dc2]\n")),
                        {"datacenter", "got a list", "(line 8)"}));
}

TEST(RegistryYamlTest, PropWithoutValueIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml("datacenter:\n")),
                        {"datacenter", "got no value", "(line 8)"}));
}

TEST(RegistryYamlTest, ValueWhereAMapIsExpectedIsRejected) {
  EXPECT_TRUE(
      IsInvalid(ParseRegistryYaml("mode: Cluster\n"), {"mode", "expected a map", "(line 1)"}));
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("repository:\n  type: Consul\n  props: [a, b]\n"),
                        {"repository.props", "expected a map", "got a list", "(line 3)"}));
}

TEST(RegistryYamlTest, KeyThatIsNotANameIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml("[a, b]: 1\n")),
                        {"mode.repository.props", "a key is a list", "(line 8)"}));
}

TEST(RegistryYamlTest, DuplicatePropIsRejectedNamingBothLines) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml("namespace: other\n")),
                        {"namespace", "duplicate key", "first set on line 6", "(line 8)"}));
}

TEST(RegistryYamlTest, DuplicateModeKeyIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml() + "  type: Cluster\n"),
                        {"mode.type", "duplicate key", "first set on line 2", "(line 8)"}));
}

TEST(RegistryYamlTest, EmptyDocumentIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(""), {"empty document"}));
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("# nothing but a comment\n"), {"empty document"}));
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("---\n"), {"empty document"}));
}

TEST(RegistryYamlTest, SyntaxErrorNamesItsLineAndColumn) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml("server-lists: [a:1\n")),
                        {"YAML syntax error", "line 9"}));
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("mode:\n  type: Cluster\n   bad: indent\n"),
                        {"YAML syntax error", "(line 3, column"}));
}

// GCC says it builds with a sanitizer by a macro, clang 14 through __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REGISTRY_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define REGISTRY_UNDER_SANITIZER 1
#endif
#endif
#ifndef REGISTRY_UNDER_SANITIZER
#define REGISTRY_UNDER_SANITIZER 0
#endif

// Parses `text` under a time and memory limit and exits 0 iff it is a YAML syntax error. Runs in
// a child process (EXPECT_EXIT), so an endless parse fails the test instead of stalling it.
[[noreturn]] void ExitZeroIfSyntaxError(const char* text) {
  alarm(10);
#if !REGISTRY_UNDER_SANITIZER
  // Sanitizers reserve terabytes of address space: there the time limit alone guards.
  const rlimit memory = {1L << 30, 1L << 30};
  setrlimit(RLIMIT_AS, &memory);
#endif
  std::exit(IsInvalid(ParseRegistryYaml(text), {"YAML syntax error"}) ? 0 : 1);
}

// yaml-cpp 0.7's LoadAll loops forever, allocating, on a flow indicator where a document should
// start (found by tests/fuzz/registry_yaml_fuzzer).
TEST(RegistryYamlTest, StrayFlowIndicatorIsASyntaxErrorNotAnEndlessParse) {
  for (const char* text : {" ,", ",", "- a\n,\n", "mode: {}\n---\n,\n"}) {
    EXPECT_EXIT(ExitZeroIfSyntaxError(text), ::testing::ExitedWithCode(0), "")
        << "'" << text << "' hangs or is not a syntax error";
  }
}

TEST(RegistryYamlTest, SecondDocumentIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml() + "---\nmode: {}\n"),
                        {"2 YAML documents", "(line 9)"}));
}

TEST(RegistryYamlTest, TopLevelScalarIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("just text\n"), {"top level", "got a single value"}));
}

TEST(RegistryYamlTest, HostKeysBesideModeAreLeftToTheHost) {
  absl::StatusOr<RegistryConfig> config =
      ParseRegistryYaml("authority:\n  users: []\nprops:\n  sql-show: true\n" + ClusterYaml());
  EXPECT_TRUE(config.ok()) << config.status();
}

TEST(RegistryYamlTest, MisspelledModeBlockIsReportedWithASuggestion) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("mdoe:\n  type: Cluster\n"),
                        {"no 'mode:' or 'repository:' block", "'mdoe'", "did you mean 'mode'"}));
}

TEST(RegistryYamlTest, ModeAndRepositoryTogetherAreRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYaml() + "repository:\n  type: Consul\n"),
                        {"both 'mode:' (line 1)", "'repository:'", "(line 8)"}));
}

TEST(RegistryYamlTest, MissingPropsBlockReportsTheRequiredNamespace) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("repository:\n  type: Consul\n"),
                        {"namespace", "missing", "(line 1)"}));
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml("repository:\n  type: Consul\n  props:\n"),
                        {"namespace", "missing", "(line 3)"}));
}

TEST(RegistryYamlTest, LoadedFileErrorsNameTheFileAndLine) {
  ScopedTempDir dir;
  std::string path = dir.Write("bad.yaml", ClusterYaml("timeToLiveSeconds: 3x\n"));
  EXPECT_TRUE(IsInvalid(LoadRegistryYamlFile(path),
                        {path + ": ", "timeToLiveSeconds: '3x' is not a duration (line 8)"}));
}

TEST(RegistryYamlTest, MissingFileIsNotFoundAndNamesTheFile) {
  EXPECT_TRUE(HasError(LoadRegistryYamlFile("/nonexistent/registry.yaml"),
                       absl::StatusCode::kNotFound,
                       {"/nonexistent/registry.yaml", "cannot be read"}));
}

}  // namespace
}  // namespace registry::conf
