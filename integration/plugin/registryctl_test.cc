// SPDX-License-Identifier: Apache-2.0
// integration/plugin/registryctl_test.cc
//
// registryctl as real processes against a real consul-dev-server process: every command's
// output and exit code, exclusivity of `claim` across racing processes, ephemeral keys vanishing
// on SIGTERM (at once) and SIGKILL (after the session TTL), usage errors, unreachable servers.
// Each test works in its own namespace, so tests share one dev server.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/plugin/registryctl_fixture.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/eventually.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const absl::Duration kTtl = absl::Seconds(1);

TEST_F(RegistryctlTest, PutThenGetPrintsTheValue) {
  RunResult put = RunCtl({"put", "/metadata/sharding_db", "v1"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_THAT(put.out, IsEmpty());
  RunResult get = RunCtl({"get", "/metadata/sharding_db"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "v1\n");
}

TEST_F(RegistryctlTest, GetOfAnAbsentKeyExitsOneNamingTheKey) {
  RunResult get = RunCtl({"get", "/nothing/here"});
  EXPECT_EQ(get.exit_code, 1);
  EXPECT_THAT(get.out, IsEmpty());
  EXPECT_THAT(get.err, HasSubstr("/nothing/here"));
}

TEST_F(RegistryctlTest, UpdateOverwritesAnExistingKeyAndExitsOneForAnAbsentOne) {
  RunResult absent = RunCtl({"update", "/k", "v"});
  EXPECT_EQ(absent.exit_code, 1);
  EXPECT_THAT(absent.err, HasSubstr("/k"));
  EXPECT_EQ(RunCtl({"exists", "/k"}).exit_code, 1) << "update must never create";
  ASSERT_EQ(RunCtl({"put", "/k", "v1"}).exit_code, 0);
  RunResult update = RunCtl({"update", "/k", "v2"});
  EXPECT_EQ(update.exit_code, 0) << update.err;
  EXPECT_EQ(RunCtl({"get", "/k"}).out, "v2\n");
}

TEST_F(RegistryctlTest, ExistsExitsZeroForAPresentKeyAndOneForAnAbsentKey) {
  ASSERT_EQ(RunCtl({"put", "/present", ""}).exit_code, 0);
  EXPECT_EQ(RunCtl({"exists", "/present"}).exit_code, 0);
  EXPECT_EQ(RunCtl({"exists", "/absent"}).exit_code, 1);
}

TEST_F(RegistryctlTest, LsPrintsTheDirectChildrenOnePerLineSorted) {
  for (const char* key : {"/metadata/sharding_db/schemas/s2", "/metadata/sharding_db/schemas/s1",
                          "/metadata/sharding_db/schemas/s1/tables/t1"}) {
    ASSERT_EQ(RunCtl({"put", key, "x"}).exit_code, 0) << key;
  }
  RunResult ls = RunCtl({"ls", "/metadata/sharding_db/schemas"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "s1\ns2\n");
  EXPECT_EQ(RunCtl({"ls", "/metadata/none"}).out, "");
}

TEST_F(RegistryctlTest, LsNamesAChildWithAControlCharacterOnStderrInsteadOfPrintingIt) {
  ASSERT_EQ(RunCtl({"put", "/dir/plain", "x"}).exit_code, 0);
  // Written by another tool: a terminal escape and a line break that would fake an entry.
  const std::string txn = absl::StrCat("[{\"KV\":{\"Verb\":\"set\",\"Key\":\"", namespace_,
                                       "/dir/a\\u001b[31mred\\nfake\",\"Value\":\"eA==\"}}]");
  absl::StatusOr<HttpReply> written =
      HttpCall("PUT", absl::StrCat("http://", server_address(), "/v1/txn"), absl::Seconds(5), txn,
               admin_token());
  ASSERT_TRUE(written.ok() && written->status == 200)
      << written.status() << (written.ok() ? written->body : "");
  RunResult ls = RunCtl({"ls", "/dir"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "plain\n");
  EXPECT_THAT(ls.err, HasSubstr("skipped the child 'a\\x1b[31mred\\nfake'"));
}

TEST_F(RegistryctlTest, RmDeletesTheKeyAndItsSubtree) {
  ASSERT_EQ(RunCtl({"put", "/a", "1"}).exit_code, 0);
  ASSERT_EQ(RunCtl({"put", "/a/b/c", "2"}).exit_code, 0);
  ASSERT_EQ(RunCtl({"put", "/ab", "3"}).exit_code, 0);
  RunResult rm = RunCtl({"rm", "/a"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(RunCtl({"exists", "/a"}).exit_code, 1);
  EXPECT_EQ(RunCtl({"exists", "/a/b/c"}).exit_code, 1);
  EXPECT_EQ(RunCtl({"exists", "/ab"}).exit_code, 0) << "a sibling sharing the prefix survives";
  EXPECT_EQ(RunCtl({"rm", "/a"}).exit_code, 0) << "removing an absent key is not an error";
}

TEST_F(RegistryctlTest, InvalidKeyExitsTwoNamingTheKey) {
  RunResult put = RunCtl({"put", "no-leading-slash", "v"});
  EXPECT_EQ(put.exit_code, 2);
  EXPECT_THAT(put.err, HasSubstr("no-leading-slash"));
}

TEST_F(RegistryctlTest, UsageErrorsExitTwoNamingTheBadArgument) {
  RunResult unknown_command = RunCtl({"frobnicate", "/k"});
  EXPECT_EQ(unknown_command.exit_code, 2);
  EXPECT_THAT(unknown_command.err, HasSubstr("'frobnicate'"));

  RunResult unknown_flag = RunCtl({"--colour=red", "get", "/k"});
  EXPECT_EQ(unknown_flag.exit_code, 2);
  EXPECT_THAT(unknown_flag.err, HasSubstr("'--colour=red'"));

  RunResult missing_value = RunProcess({REGISTRYCTL_BIN, "get", "/k", "--servers"});
  EXPECT_EQ(missing_value.exit_code, 2);
  EXPECT_THAT(missing_value.err, HasSubstr("'--servers'"));

  RunResult arity = RunCtl({"put", "/k"});
  EXPECT_EQ(arity.exit_code, 2);
  EXPECT_THAT(arity.err, HasSubstr("'put' takes KEY VALUE"));

  RunResult none = RunProcess({REGISTRYCTL_BIN});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("COMMAND"));

  RunResult bad_servers = RunProcess({REGISTRYCTL_BIN, "--servers=not a server", "get", "/k"});
  EXPECT_EQ(bad_servers.exit_code, 2);
  EXPECT_THAT(bad_servers.err, HasSubstr("not a server"));
}

TEST_F(RegistryctlTest, HelpListsEveryCommandAndFlag) {
  RunResult help = RunProcess({REGISTRYCTL_BIN, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* word : {"get KEY", "put KEY VALUE", "update KEY VALUE", "exists KEY", "ls KEY",
                           "rm KEY", "ephemeral KEY VALUE", "claim KEY VALUE", "stats", "--stats",
                           "--json", "--config", "--servers", "--namespace", "--token",
                           "--token-file", "--plugin-dir", "127.0.0.1:8500", "Exit status"}) {
    EXPECT_THAT(help.out, HasSubstr(word));
  }
}

TEST_F(RegistryctlTest, DevServerHelpShowsItsOwnFlagsOnly) {
  RunResult help = RunProcess({REGISTRY_DEVSERVER_BIN, "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* flag : {"--http-addr", "--session-ttl-min", "--default-query-time",
                           "--max-query-time", "--node-name", "--datacenter", "--acl-master-token",
                           "--enable-fault-injection", "--version"}) {
    EXPECT_THAT(help.out, HasSubstr(flag));
  }
  // Not gflags' own flags, nor where it was built.
  for (const char* foreign : {"flagfile", "tab_completion_word", "helpxml", ".cc"}) {
    EXPECT_THAT(help.out, Not(HasSubstr(foreign)));
  }
}

TEST_F(RegistryctlTest, BothBinariesAnswerVersion) {
  for (const char* binary : {REGISTRYCTL_BIN, REGISTRY_DEVSERVER_BIN}) {
    RunResult version = RunProcess({binary, "--version"});
    EXPECT_EQ(version.exit_code, 0) << binary << ": " << version.err;
    EXPECT_THAT(version.out, ::testing::MatchesRegex(
                                 "(registryctl|consul-dev-server) [0-9]+\\.[0-9]+\\.[0-9]+\n"));
  }
}

TEST_F(RegistryctlTest, UnreachableServerExitsTwoNamingTheAddressOnceTheRequestTimeoutPassed) {
  // A port that was free a moment ago: nothing listens there.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  const std::string server = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));

  const std::string config = absl::StrCat(ProcessTempDir(), "/unreachable.yaml");
  std::ofstream(config) << "mode:\n  type: Cluster\n  repository:\n    type: Consul\n"
                           "    props:\n      namespace: unreachable\n      server-lists: "
                        << server << "\n      requestTimeoutMilliseconds: 1000\n";
  // Connecting is retried (a restarting server comes back) until the request timeout.
  RunResult get = RunProcess({REGISTRYCTL_BIN, "--config=" + config, "get", "/k"});
  EXPECT_EQ(get.exit_code, 2);
  EXPECT_THAT(get.err, HasSubstr(server));
  EXPECT_EQ(std::count(get.err.begin(), get.err.end(), '\n'), 1) << get.err;
  EXPECT_GE(get.elapsed, absl::Milliseconds(300)) << "back-offs of 50, 100, 200 ms fit in 1 s";
  EXPECT_LT(get.elapsed, absl::Seconds(5)) << "request timeout is 1 s";
}

TEST_F(RegistryctlTest, EphemeralHoldsUntilSigtermThenExitsZeroAndTheKeyIsGoneAtOnce) {
  std::unique_ptr<Subprocess> holder =
      StartHolding(Ctl({"ephemeral", "/nodes/compute_nodes/online/proxy/p1", "{\"port\":3307}"}));
  ASSERT_NE(holder, nullptr);
  EXPECT_EQ(RunCtl({"get", "/nodes/compute_nodes/online/proxy/p1"}).out, "{\"port\":3307}\n");
  holder->Signal(SIGTERM);
  EXPECT_EQ(holder->Wait(absl::Now() + absl::Seconds(10)), 0) << holder->err();
  // Closing destroyed the session before the process exited: no waiting for a TTL.
  EXPECT_EQ(RunCtl({"exists", "/nodes/compute_nodes/online/proxy/p1"}).exit_code, 1);
}

TEST_F(RegistryctlTest, EphemeralExitsZeroOnSigintToo) {
  std::unique_ptr<Subprocess> holder = StartHolding(Ctl({"ephemeral", "/e", "v"}));
  ASSERT_NE(holder, nullptr);
  holder->Signal(SIGINT);
  EXPECT_EQ(holder->Wait(absl::Now() + absl::Seconds(10)), 0) << holder->err();
  EXPECT_EQ(RunCtl({"exists", "/e"}).exit_code, 1);
}

TEST_F(RegistryctlTest, EphemeralKeyOfAKilledProcessDisappearsAfterTheSessionTtl) {
  const std::string config = WriteConfig(namespace_);
  std::unique_ptr<Subprocess> holder =
      StartHolding({REGISTRYCTL_BIN, "--config=" + config, "ephemeral", "/nodes/online/p2", "v"});
  ASSERT_NE(holder, nullptr);
  const absl::Time killed = absl::Now();
  holder->Signal(SIGKILL);
  EXPECT_EQ(holder->Wait(absl::Now() + absl::Seconds(10)), 128 + SIGKILL);
  // Consul invalidates a session 2 x TTL after its last renewal; allow scheduling slack. Each
  // check starts a `registryctl exists` process: one every 50 ms.
  EXPECT_TRUE(registry::testing::Eventually(
      [&] {
        return RunCtl({"exists", "/nodes/online/p2"}).exit_code == 1;
      },
      killed + 2 * kTtl + absl::Seconds(5) - absl::Now(), absl::Milliseconds(50)));
  const absl::Duration took = absl::Now() - killed;
  EXPECT_LT(took, 2 * kTtl + absl::Seconds(5));
}

TEST_F(RegistryctlTest, ExactlyOneOfManyRacingClaimsWins) {
  constexpr int kContenders = 6;
  std::vector<std::unique_ptr<Subprocess>> contenders;
  for (int i = 0; i < kContenders; ++i) {
    absl::StatusOr<std::unique_ptr<Subprocess>> process =
        Subprocess::Start(Ctl({"claim", "/leader", absl::StrCat("c", i)}));
    ASSERT_TRUE(process.ok()) << process.status();
    contenders.push_back(std::move(*process));
  }
  // Losers exit 1 on their own; the winner prints ready and holds.
  int winners = 0;
  int losers = 0;
  Subprocess* winner = nullptr;
  std::string winner_value;
  for (int i = 0; i < kContenders; ++i) {
    std::optional<std::string> line = contenders[i]->ReadLine(absl::Now() + absl::Seconds(15));
    if (line == "ready") {
      ++winners;
      winner = contenders[i].get();
      winner_value = absl::StrCat("c", i);
    } else {
      EXPECT_EQ(contenders[i]->Wait(absl::Now() + absl::Seconds(15)), 1) << contenders[i]->err();
      EXPECT_THAT(contenders[i]->err(), HasSubstr("already held"));
      ++losers;
    }
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(losers, kContenders - 1);
  ASSERT_NE(winner, nullptr);
  EXPECT_EQ(RunCtl({"get", "/leader"}).out, winner_value + "\n");
  winner->Signal(SIGTERM);
  EXPECT_EQ(winner->Wait(absl::Now() + absl::Seconds(10)), 0) << winner->err();
  EXPECT_EQ(RunCtl({"exists", "/leader"}).exit_code, 1);
}

TEST_F(RegistryctlTest, ClaimOfAKeyHeldByAnotherProcessExitsOne) {
  std::unique_ptr<Subprocess> holder = StartHolding(Ctl({"claim", "/lock", "first"}));
  ASSERT_NE(holder, nullptr);
  RunResult second = RunCtl({"claim", "/lock", "second"});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.err, HasSubstr("/lock"));
  EXPECT_EQ(RunCtl({"get", "/lock"}).out, "first\n");
}

TEST_F(RegistryctlTest, FlagsOverrideTheConfigFile) {
  const std::string config = WriteConfig("ctl_from_file");
  ASSERT_EQ(RunProcess({REGISTRYCTL_BIN, "--config=" + config, "--namespace=" + namespace_, "put",
                        "/overridden", "yes"})
                .exit_code,
            0);
  EXPECT_EQ(RunCtl({"get", "/overridden"}).out, "yes\n");
  EXPECT_EQ(RunProcess({REGISTRYCTL_BIN, "--config=" + config, "exists", "/overridden"}).exit_code,
            1);
}

TEST_F(RegistryctlTest, LogLevelInfoInTheConfigLogsTheInstanceSessionToStderr) {
  const std::string quiet = WriteConfig(namespace_);
  RunResult lock = RunProcess({REGISTRYCTL_BIN, "--config=" + quiet, "lock", "job", "--", "true"});
  ASSERT_EQ(lock.exit_code, 0) << lock.err;
  EXPECT_THAT(lock.err, Not(HasSubstr(" I session: instance session")));

  const std::string verbose = WriteConfig(namespace_ + "_info");
  std::ofstream(verbose, std::ios::app) << "      logLevel: info\n";
  lock = RunProcess({REGISTRYCTL_BIN, "--config=" + verbose, "lock", "job", "--", "true"});
  ASSERT_EQ(lock.exit_code, 0) << lock.err;
  EXPECT_THAT(lock.err, HasSubstr(" I session: instance session "));
  EXPECT_THAT(lock.err, HasSubstr(" created"));
}

TEST_F(RegistryctlTest, StatsPrintsTheMetricsOfItsOneAnsweredRead) {
  RunResult stats = RunCtl({"stats"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("# TYPE registry_consul_requests_total counter\n"));
  EXPECT_THAT(stats.out,
              HasSubstr("\nregistry_consul_requests_total{endpoint=\"kv\",outcome=\"ok\"} 1\n"));
  EXPECT_THAT(stats.out, HasSubstr("\nregistry_consul_connection_state{state=\"connected\"} 1\n"));

  RunResult json = RunCtl({"stats", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  size_t text_samples = 0;
  for (absl::string_view line : absl::StrSplit(stats.out, '\n', absl::SkipEmpty())) {
    if (line[0] != '#') ++text_samples;
  }
  const std::vector<std::string> objects = absl::StrSplit(json.out, '\n', absl::SkipEmpty());
  EXPECT_EQ(objects.size(), text_samples);
  EXPECT_THAT(json.out, HasSubstr("{\"labels\":{\"endpoint\":\"kv\",\"outcome\":\"ok\"},"
                                  "\"name\":\"registry_consul_requests_total\",\"type\":"
                                  "\"counter\",\"value\":1.0}\n"));
  EXPECT_EQ(RunCtl({"get", "/k", "--json"}).exit_code, 2) << "--json is for stats only";
}

TEST_F(RegistryctlTest, TheStatsFlagPrintsTheMetricsOnStderrWhenTheCommandEnds) {
  RunResult put = RunCtl({"--stats", "put", "/stats/k", "v"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_EQ(put.out, "");
  EXPECT_THAT(put.err, HasSubstr("# HELP registry_consul_requests_total "));
  EXPECT_THAT(put.err, HasSubstr("registry_consul_connection_state{state=\"connected\"} 1\n"));
  EXPECT_THAT(put.err, Not(HasSubstr("registry_consul_requests_total{endpoint=\"txn\",outcome="
                                     "\"ok\"} 0\n")));
}

TEST_F(RegistryctlTest, ConfigForATypeWithoutAPluginExitsTwoNamingTheType) {
  const std::string path = absl::StrCat(ProcessTempDir(), "/zk.yaml");
  std::ofstream(path) << "mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n"
                         "    props:\n      namespace: x\n      server-lists: 127.0.0.1:2181\n";
  RunResult get = RunProcess({REGISTRYCTL_BIN, "--config=" + path, "get", "/k"});
  EXPECT_EQ(get.exit_code, 2);
  EXPECT_THAT(get.err, HasSubstr("ZooKeeper"));
}

}  // namespace
}  // namespace registry::integration
