// SPDX-License-Identifier: Apache-2.0
// tests/conf/prop_values_test.cc
//
// The values of the repository props, read from YAML: every error names key, value and line.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "conf/registry_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conf/error_matchers.h"
#include "tests/conf/scoped_temp_dir.h"
#include "tests/conf/yaml_fixture.h"

namespace registry::conf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<RegistryConfig> WithProp(absl::string_view prop) {
  return ParseRegistryYaml(ClusterYaml(absl::StrCat(prop, "\n")));
}

// A prop whose value is rejected: the message names the key, the quoted value and line 8.
::testing::AssertionResult Rejects(absl::string_view key, absl::string_view value) {
  return IsInvalid(WithProp(absl::StrCat(key, ": ", value)),
                   {absl::StrCat(key, ": '", value, "'"), "(line 8)"});
}

TEST(PropValuesTest, TtlPlainNumberMeansSeconds) {
  absl::StatusOr<RegistryConfig> config = WithProp("timeToLiveSeconds: 45");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->session_ttl, absl::Seconds(45));
}

TEST(PropValuesTest, TtlAcceptsGoStyleDurations) {
  EXPECT_EQ(WithProp("timeToLiveSeconds: 30s")->session_ttl, absl::Seconds(30));
  EXPECT_EQ(WithProp("timeToLiveSeconds: 1m30s")->session_ttl, absl::Seconds(90));
  EXPECT_EQ(WithProp("timeToLiveSeconds: 1500ms")->session_ttl, absl::Milliseconds(1500));
  EXPECT_EQ(WithProp("timeToLiveSeconds: 24h")->session_ttl, absl::Hours(24));
}

TEST(PropValuesTest, TtlThatIsNotADurationIsRejectedInTheDocumentedWords) {
  EXPECT_TRUE(IsInvalid(WithProp("timeToLiveSeconds: 3x"),
                        {"timeToLiveSeconds: '3x' is not a duration (line 8)"}));
  EXPECT_TRUE(Rejects("timeToLiveSeconds", "30 s"));
  EXPECT_TRUE(Rejects("timeToLiveSeconds", "inf"));
  EXPECT_TRUE(Rejects("timeToLiveSeconds", "1.5"));
}

TEST(PropValuesTest, TtlMustBePositive) {
  EXPECT_TRUE(IsInvalid(WithProp("timeToLiveSeconds: 0"), {"'0' is not a positive duration"}));
  EXPECT_TRUE(
      IsInvalid(WithProp("timeToLiveSeconds: -5"), {"timeToLiveSeconds: '-5'", "(line 8)"}));
  EXPECT_TRUE(Rejects("timeToLiveSeconds", "-1s"));
}

TEST(PropValuesTest, TtlAboveOneDayIsRejected) {
  EXPECT_TRUE(IsInvalid(WithProp("timeToLiveSeconds: 25h"),
                        {"timeToLiveSeconds: '25h'", "above the maximum of 24h", "(line 8)"}));
  EXPECT_TRUE(Rejects("timeToLiveSeconds", "86401"));
  EXPECT_TRUE(Rejects("timeToLiveSeconds", "99999999999999999999"));
}

TEST(PropValuesTest, DurationsFinerThanAMillisecondAreRejected) {
  EXPECT_TRUE(IsInvalid(WithProp("timeToLiveSeconds: 1500us"), {"finer than a millisecond"}));
}

TEST(PropValuesTest, BlockQueryMillisecondsKeepMillisecondPrecision) {
  absl::StatusOr<RegistryConfig> config = WithProp("blockQueryTimeMilliseconds: 1501");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->block_query_wait, absl::Milliseconds(1501));
}

TEST(PropValuesTest, BlockQueryMillisecondsOverrideSecondsInEitherOrder) {
  EXPECT_EQ(
      WithProp("blockQueryTimeToSeconds: 5\nblockQueryTimeMilliseconds: 250")->block_query_wait,
      absl::Milliseconds(250));
  EXPECT_EQ(
      WithProp("blockQueryTimeMilliseconds: 250\nblockQueryTimeToSeconds: 5")->block_query_wait,
      absl::Milliseconds(250));
}

TEST(PropValuesTest, BlockQuerySecondsAreCheckedEvenWhenOverridden) {
  EXPECT_TRUE(IsInvalid(WithProp("blockQueryTimeMilliseconds: 250\nblockQueryTimeToSeconds: x"),
                        {"blockQueryTimeToSeconds: 'x'", "(line 9)"}));
}

TEST(PropValuesTest, BlockQueryWaitAboveConsulsTenMinutesIsRejected) {
  EXPECT_TRUE(Rejects("blockQueryTimeToSeconds", "601"));
  EXPECT_TRUE(Rejects("blockQueryTimeMilliseconds", "600001"));
  EXPECT_TRUE(Rejects("blockQueryTimeMilliseconds", "0"));
}

TEST(PropValuesTest, NegativeOrNonNumericTimeoutsAreRejected) {
  for (absl::string_view key : {"connectTimeoutMilliseconds", "requestTimeoutMilliseconds",
                                "lockRetryMilliseconds", "sessionLockDelayMilliseconds"}) {
    EXPECT_TRUE(Rejects(key, "-1")) << key;
    EXPECT_TRUE(Rejects(key, "abc")) << key;
    EXPECT_TRUE(Rejects(key, "10 ms")) << key;
  }
  EXPECT_TRUE(Rejects("connectTimeoutMilliseconds", "0"));
}

TEST(PropValuesTest, TimeoutsTakeMillisecondsOrGoStyleDurations) {
  absl::StatusOr<RegistryConfig> config = WithProp(
      "connectTimeoutMilliseconds: 1200\nrequestTimeoutMilliseconds: 2s\n"
      "lockRetryMilliseconds: 75");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->connect_timeout, absl::Milliseconds(1200));
  EXPECT_EQ(config->request_timeout, absl::Seconds(2));
  EXPECT_EQ(config->lock_retry, absl::Milliseconds(75));
}

TEST(PropValuesTest, LockRetryLongerThanTheTtlIsRejectedNamingBothProps) {
  EXPECT_TRUE(IsInvalid(WithProp("timeToLiveSeconds: 1\nlockRetryMilliseconds: 2000"),
                        {"lockRetryMilliseconds: 2s", "at most 1s (timeToLiveSeconds)"}));
  EXPECT_EQ(WithProp("timeToLiveSeconds: 1\nlockRetryMilliseconds: 1000")->lock_retry,
            absl::Seconds(1));
}

TEST(PropValuesTest, AnOverrideIsCheckedAgainstTheOtherProps) {
  absl::StatusOr<RegistryConfig> config = WithProp("timeToLiveSeconds: 1");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::Status status = ApplyOverride(&*config, "lockRetryMilliseconds", "1500");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("lockRetryMilliseconds: 1.5s"));
}

TEST(PropValuesTest, SessionLockDelayAllowsZeroUpToSixtySeconds) {
  EXPECT_EQ(WithProp("sessionLockDelayMilliseconds: 0")->session_lock_delay, absl::ZeroDuration());
  EXPECT_EQ(WithProp("sessionLockDelayMilliseconds: 60000")->session_lock_delay, absl::Minutes(1));
  EXPECT_TRUE(IsInvalid(WithProp("sessionLockDelayMilliseconds: 60001"),
                        {"sessionLockDelayMilliseconds: '60001'", "maximum of 1m", "(line 8)"}));
}

TEST(PropValuesTest, ServerListIsSplitOnCommasAndTrimmed) {
  absl::StatusOr<RegistryConfig> config = ParseRegistryYaml(ClusterYamlWithOnlyProps(
      "namespace: ds\n"
      "server-lists: ' a:8500 ,http://b.example:8501,  http://[::1]:8500 '\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->servers, ElementsAre("a:8500", "http://b.example:8501", "http://[::1]:8500"));
}

TEST(PropValuesTest, EmptyServerListIsRejected) {
  EXPECT_TRUE(
      IsInvalid(ParseRegistryYaml(ClusterYamlWithOnlyProps("namespace: ds\nserver-lists: ''\n")),
                {"server-lists: ''", "empty server list", "(line 7)"}));
}

TEST(PropValuesTest, MalformedServerAddressesAreRejected) {
  struct Case {
    const char* list;
    const char* bad_entry;
    const char* problem;
  };
  // Credentials in an address are refused without being shown.
  absl::StatusOr<RegistryConfig> with_password = ParseRegistryYaml(
      ClusterYamlWithOnlyProps("namespace: ds\nserver-lists: 'http://user:secret@a:8500'\n"));
  EXPECT_TRUE(IsInvalid(with_password, {"server-lists: '...@a:8500'", "user information"}));
  EXPECT_FALSE(absl::StrContains(with_password.status().message(), "secret"));
  for (const Case& c :
       {Case{"10.0.0.1", "10.0.0.1", "no port"}, Case{"a:8500,b", "b", "no port"},
        Case{"a:", "a:", "no port"}, Case{":8500", ":8500", "no host"},
        Case{"a:0", "a:0", "outside 1..65535"}, Case{"a:65536", "a:65536", "outside 1..65535"},
        Case{"a:85x", "a:85x", "not a number"}, Case{"ftp://a:21", "ftp://a:21", "scheme 'ftp'"},
        Case{"a b:8500", "a b:8500", "whitespace"},
        Case{"a:8500,,b:8500", "a:8500,,b:8500", "empty entry between commas"},
        Case{"a:8500,", "a:8500,", "empty entry between commas"},
        Case{"http://a:8500/v1", "http://a:8500/v1", "path"},
        Case{"::1:8500", "::1:8500", "without brackets"},
        Case{"bad_-.host:1", "bad_-.host:1", "invalid host"},
        Case{"a:8500,a:8500", "a:8500", "listed twice"}}) {
    EXPECT_TRUE(
        IsInvalid(ParseRegistryYaml(ClusterYamlWithOnlyProps(
                      absl::StrCat("namespace: ds\nserver-lists: '", c.list, "'\n"))),
                  {absl::StrCat("server-lists: '", c.bad_entry, "'"), c.problem, "(line 7)"}))
        << c.list;
  }
}

TEST(PropValuesTest, MissingServerListIsRejected) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYamlWithOnlyProps("namespace: ds\n")),
                        {"server-lists", "missing", "(line 5)"}));
}

TEST(PropValuesTest, NamespaceIsRequired) {
  EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYamlWithOnlyProps("server-lists: a:1\n")),
                        {"namespace", "missing", "required", "(line 5)"}));
}

TEST(PropValuesTest, MalformedNamespacesAreRejected) {
  for (const char* bad : {"/governance_ds", "governance_ds/", "gov ds", "a//b", "a/../b", "x?y"}) {
    EXPECT_TRUE(IsInvalid(ParseRegistryYaml(ClusterYamlWithOnlyProps(
                              absl::StrCat("server-lists: a:1\nnamespace: '", bad, "'\n"))),
                          {absl::StrCat("namespace: '", bad, "'"), "(line 7)"}))
        << bad;
  }
}

TEST(PropValuesTest, NestedNamespaceIsAccepted) {
  EXPECT_EQ(
      ParseRegistryYaml(ClusterYamlWithOnlyProps("server-lists: a:1\nnamespace: org/ds-1.a\n"))
          ->namespace_name,
      "org/ds-1.a");
}

TEST(PropValuesTest, DatacenterIsKeptAndChecked) {
  EXPECT_EQ(WithProp("datacenter: dc-east_1")->datacenter, "dc-east_1");
  EXPECT_TRUE(Rejects("datacenter", "dc 1"));
}

TEST(PropValuesTest, SessionNodeDefaultsToThePluginsNodeAndIsChecked) {
  EXPECT_EQ(WithProp("datacenter: dc1")->session_node, "registry-consul");
  EXPECT_EQ(WithProp("sessionNode: ds-sessions.a_1")->session_node, "ds-sessions.a_1");
  EXPECT_EQ(WithProp("sessionNode: \"\"")->session_node, "");
  EXPECT_TRUE(Rejects("sessionNode", "two words"));
  EXPECT_TRUE(Rejects("sessionNode", std::string(64, 'n')));
}

TEST(PropValuesTest, LogLevelIsOneOfFourNamesInAnyCaseAndUnsetByDefault) {
  EXPECT_EQ(WithProp("datacenter: dc1")->log_level, std::nullopt);
  EXPECT_EQ(WithProp("logLevel: debug")->log_level, LogLevel::kDebug);
  EXPECT_EQ(WithProp("logLevel: WARN")->log_level, LogLevel::kWarn);
  EXPECT_THAT(WithProp("logLevel: info")->ToString(), HasSubstr("log_level: info"));
  EXPECT_TRUE(
      IsInvalid(WithProp("logLevel: loud"),
                {"logLevel: 'loud' is not a log level (error, warn, info or debug)", "(line 8)"}));
}

TEST(PropValuesTest, TxnMaxOperationsIsAWholeNumberFromOneTo128AndDefaultsTo64) {
  EXPECT_EQ(WithProp("datacenter: dc1")->txn_max_operations, 64);
  EXPECT_EQ(WithProp("txnMaxOperations: 128")->txn_max_operations, 128);
  EXPECT_EQ(WithProp("txnMaxOperations: 1")->txn_max_operations, 1);
  EXPECT_THAT(WithProp("txnMaxOperations: 128")->ToString(), HasSubstr("txn_max_operations: 128"));
  EXPECT_TRUE(IsInvalid(WithProp("txnMaxOperations: 129"),
                        {"txnMaxOperations: '129' is not from 1 to 128", "(line 8)"}));
  EXPECT_EQ(WithProp("datacenter: dc1")->watch_max_connections, 32);
  EXPECT_EQ(WithProp("watchMaxConnections: 128")->watch_max_connections, 128);
  EXPECT_TRUE(IsInvalid(WithProp("watchMaxConnections: 0"),
                        {"watchMaxConnections: '0' is not from 1 to 180", "(line 8)"}));
  EXPECT_TRUE(IsInvalid(WithProp("txnMaxOperations: many"),
                        {"txnMaxOperations: 'many' is not a whole number", "(line 8)"}));
}

TEST(PropValuesTest, TokenIsKeptButNeverPrinted) {
  absl::StatusOr<RegistryConfig> config = WithProp("token: s3cr3t-t0ken");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token, "s3cr3t-t0ken");
  EXPECT_THAT(config->ToString(), Not(HasSubstr("s3cr3t")));
  EXPECT_THAT(config->ToString(), HasSubstr("token: <set>"));
}

TEST(PropValuesTest, BadTokenIsRejectedWithoutEchoingIt) {
  absl::StatusOr<RegistryConfig> config = WithProp("token: 's3cr3t t0ken'");
  EXPECT_TRUE(IsInvalid(config, {"token", "whitespace", "(line 8)"}));
  EXPECT_THAT(config.status().message(), Not(HasSubstr("s3cr3t")));
  EXPECT_TRUE(IsInvalid(WithProp("token: ''"), {"token", "empty", "(line 8)"}));
}

TEST(PropValuesTest, TokenFileIsReadAndTrimmed) {
  ScopedTempDir dir;
  std::string path = dir.Write("token", "\n  tok-123 \n");
  absl::StatusOr<RegistryConfig> config = WithProp(absl::StrCat("tokenFile: ", path));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token, "tok-123");
}

TEST(PropValuesTest, UnreadableOrEmptyTokenFileIsRejected) {
  EXPECT_TRUE(HasError(WithProp("tokenFile: /nonexistent/token"), absl::StatusCode::kNotFound,
                       {"tokenFile: '/nonexistent/token' cannot be read", "(line 8)"}));
  ScopedTempDir dir;
  std::string empty = dir.Write("empty_token", " \n\t\n");
  EXPECT_TRUE(IsInvalid(WithProp(absl::StrCat("tokenFile: ", empty)),
                        {absl::StrCat("tokenFile: '", empty, "'"), "empty", "(line 8)"}));
  EXPECT_TRUE(IsInvalid(WithProp(absl::StrCat("tokenFile: ", dir.path())),
                        {"tokenFile: '", "cannot be read", "(line 8)"}));
}

TEST(PropValuesTest, TokenAndTokenFileTogetherAreRejected) {
  ScopedTempDir dir;
  std::string path = dir.Write("token", "tok");
  EXPECT_TRUE(IsInvalid(WithProp(absl::StrCat("token: abc\ntokenFile: ", path)),
                        {"tokenFile: '", "conflicts with token", "(line 9)"}));
  EXPECT_TRUE(IsInvalid(WithProp(absl::StrCat("tokenFile: ", path, "\ntoken: abc")),
                        {"token: conflicts with tokenFile", "(line 9)"}));
}

TEST(PropValuesTest, RelativeFilesOfALoadedYamlAreTakenFromItsDirectory) {
  ScopedTempDir dir;
  dir.Write("rel_token", "rel-token\n");
  std::string yaml = dir.Write("rel.yaml", ClusterYaml("tokenFile: rel_token\n"));
  absl::StatusOr<RegistryConfig> config = LoadRegistryYamlFile(yaml);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token, "rel-token");
}

}  // namespace
}  // namespace registry::conf
