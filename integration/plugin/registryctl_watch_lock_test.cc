// SPDX-License-Identifier: Apache-2.0
// integration/plugin/registryctl_watch_lock_test.cc
//
// `registryctl watch`, `registryctl lock` (also --fair, --read, --write) and `registryctl
// semaphore` as real processes against a real consul-dev-server process (fault injection on, for
// a forced session expiry): JSON event lines written by other processes' changes, exit codes,
// timeouts, signal forwarding, lock loss, semaphore limits, readers and writers. Each test works
// in its own namespace, so tests share one dev server.
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/eventually.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;

using ::registry::testing::kPatience;

class RegistryctlWatchLockTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    ServerProcessTest::SetUp();
    if (HasFatalFailure()) return;
    namespace_ =
        absl::StrCat("surface_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    // A 1 s session TTL and no lock-delay, so a lost lock is quickly free again.
    config_ = absl::StrCat(ProcessTempDir(), "/", namespace_, ".yaml");
    std::ofstream(config_) << "repository:\n  type: Consul\n  props:\n    namespace: " << namespace_
                           << "\n    server-lists: " << server_address()
                           << (token().empty() ? "" : "\n    token: " + token())
                           << "\n    timeToLiveSeconds: 1\n    sessionLockDelayMilliseconds: 0\n"
                              "    lockRetryMilliseconds: 50\n";
  }

  std::vector<std::string> Ctl(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {REGISTRYCTL_BIN, "--config=" + config_};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  RunResult RunCtl(const std::vector<std::string>& args) const { return RunProcess(Ctl(args)); }

  // Starts `registryctl watch` and waits until it reports the watch established.
  std::unique_ptr<Subprocess> StartWatch(const std::vector<std::string>& args) {
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(Ctl(args));
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return nullptr;
    // The connection listener is registered before the "watching" line is printed, and the
    // instance session may connect at any time, so its state line can come first.
    const absl::Time deadline = absl::Now() + kPatience;
    std::optional<std::string> line = (*process)->ReadErrLine(deadline);
    while (line.has_value() && absl::StartsWith(*line, "registryctl: connection ")) {
      line = (*process)->ReadErrLine(deadline);
    }
    EXPECT_TRUE(line.has_value() && absl::StartsWith(*line, "registryctl: watching "))
        << "stderr: " << (*process)->err();
    return std::move(*process);
  }

  // Starts `registryctl lock NAME -- sh -c SCRIPT` and waits for the script's first line.
  std::unique_ptr<Subprocess> StartHolder(const std::string& name, const std::string& script) {
    return StartHolding({"lock", name}, script);
  }
  // As StartHolder, for `registryctl semaphore NAME --limit LIMIT -- sh -c SCRIPT`.
  std::unique_ptr<Subprocess> StartPermitHolder(const std::string& name, int limit,
                                                const std::string& script) {
    return StartHolding({"semaphore", name, absl::StrCat("--limit=", limit)}, script);
  }
  // Starts `registryctl COMMAND_ARGS... -- sh -c SCRIPT` and waits for the script's first line.
  std::unique_ptr<Subprocess> StartHolding(std::vector<std::string> command_args,
                                           const std::string& script) {
    for (const char* arg : {"--", "/bin/sh", "-c"}) command_args.push_back(arg);
    command_args.push_back(script);
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(Ctl(command_args));
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return nullptr;
    std::optional<std::string> line = (*process)->ReadLine(absl::Now() + kPatience);
    EXPECT_EQ(line, "holding") << "stderr: " << (*process)->err();
    return std::move(*process);
  }

  std::string namespace_;
  std::string config_;
};

TEST_F(RegistryctlWatchLockTest, WatchPrintsOneJsonLinePerChangeMadeByOtherProcesses) {
  std::unique_ptr<Subprocess> watch = StartWatch({"watch", "/cfg"});
  ASSERT_NE(watch, nullptr);
  // Rapid writes to one key may be coalesced into one event: read each before the next write.
  const absl::Time deadline = absl::Now() + kPatience;
  ASSERT_EQ(RunCtl({"put", "/cfg/a", "v1"}).exit_code, 0);
  EXPECT_EQ(watch->ReadLine(deadline), R"({"type":"ADDED","key":"/cfg/a","value":"v1"})");
  ASSERT_EQ(RunCtl({"update", "/cfg/a", "say \"hi\"\n"}).exit_code, 0);
  EXPECT_EQ(watch->ReadLine(deadline),
            R"({"type":"UPDATED","key":"/cfg/a","value":"say \"hi\"\n"})");
  ASSERT_EQ(RunCtl({"put", "/cfgx", "sibling, not watched"}).exit_code, 0);
  ASSERT_EQ(RunCtl({"rm", "/cfg"}).exit_code, 0);
  EXPECT_EQ(watch->ReadLine(deadline),
            R"({"type":"DELETED","key":"/cfg/a","value":"say \"hi\"\n"})");
  watch->Signal(SIGTERM);
  EXPECT_EQ(watch->Wait(absl::Now() + kPatience), 0) << watch->err();
  EXPECT_EQ(watch->ReadLine(absl::Now()), std::nullopt) << "nothing after the three events";
}

TEST_F(RegistryctlWatchLockTest, WatchInitialReportsExistingKeysFirstAndExitsZeroOnSigint) {
  ASSERT_EQ(RunCtl({"put", "/nodes/n1", "up"}).exit_code, 0);
  ASSERT_EQ(RunCtl({"put", "/nodes/n2", ""}).exit_code, 0);
  std::unique_ptr<Subprocess> watch = StartWatch({"watch", "--initial", "/nodes"});
  ASSERT_NE(watch, nullptr);
  ASSERT_EQ(RunCtl({"put", "/nodes/n3", "new"}).exit_code, 0);
  const absl::Time deadline = absl::Now() + kPatience;
  EXPECT_EQ(watch->ReadLine(deadline), R"({"type":"ADDED","key":"/nodes/n1","value":"up"})");
  EXPECT_EQ(watch->ReadLine(deadline), R"({"type":"ADDED","key":"/nodes/n2","value":""})");
  EXPECT_EQ(watch->ReadLine(deadline), R"({"type":"ADDED","key":"/nodes/n3","value":"new"})");
  watch->Signal(SIGINT);
  EXPECT_EQ(watch->Wait(absl::Now() + kPatience), 0) << watch->err();
}

TEST_F(RegistryctlWatchLockTest, WatchOfAMalformedKeyExitsTwoNamingIt) {
  RunResult watch = RunCtl({"watch", "no-slash"});
  EXPECT_EQ(watch.exit_code, 2);
  EXPECT_THAT(watch.err, HasSubstr("no-slash"));
}

TEST_F(RegistryctlWatchLockTest, LockRunsTheCommandAndExitsWithItsStatus) {
  RunResult lock = RunCtl({"lock", "job", "--", "/bin/sh", "-c", "echo running; exit 7"});
  EXPECT_EQ(lock.exit_code, 7) << lock.err;
  EXPECT_EQ(lock.out, "running\n");
  EXPECT_EQ(RunCtl({"lock", "job", "--timeout-ms", "0", "--", "true"}).exit_code, 0)
      << "released after the command";
}

TEST_F(RegistryctlWatchLockTest, TheCommandInheritsNoConnectionToConsul) {
  // The sockets a command holds: those the test process passes on to any child, plus any that
  // registryctl would pass on (its connections to the server).
  const std::vector<std::string> count_sockets = {"/bin/sh", "-c",
                                                  "ls -l /proc/$$/fd | grep -c 'socket:' || true"};
  RunResult direct = RunProcess(count_sockets);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  std::vector<std::string> args = {"lock", "fds", "--"};
  args.insert(args.end(), count_sockets.begin(), count_sockets.end());
  RunResult under_lock = RunCtl(args);
  ASSERT_EQ(under_lock.exit_code, 0) << under_lock.err;
  EXPECT_EQ(under_lock.out, direct.out) << "the command holds registryctl's sockets";
}

TEST_F(RegistryctlWatchLockTest, LockTimesOutWithExitOneWhileAnotherProcessHoldsIt) {
  std::unique_ptr<Subprocess> holder = StartHolder("busy", "echo holding; exec sleep 60");
  ASSERT_NE(holder, nullptr);
  RunResult second = RunCtl({"lock", "busy", "--timeout-ms=300", "--", "echo", "never"});
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_EQ(second.out, "");
  EXPECT_THAT(second.err, AllOf(HasSubstr("busy"), HasSubstr("not acquired within 300ms")));
  EXPECT_GE(second.elapsed, absl::Milliseconds(300));
}

TEST_F(RegistryctlWatchLockTest, SigtermWhileWaitingForTheLockExitsAtOnceWithoutRunningCmd) {
  std::unique_ptr<Subprocess> holder = StartHolder("queue", "echo holding; exec sleep 60");
  ASSERT_NE(holder, nullptr);
  absl::StatusOr<std::unique_ptr<Subprocess>> waiter =
      Subprocess::Start(Ctl({"lock", "queue", "--", "echo", "never"}));
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  EXPECT_EQ((*waiter)->ReadErrLine(absl::Now() + kPatience),
            "registryctl: lock queue: waiting for the lock");
  const absl::Time signalled = absl::Now();
  (*waiter)->Signal(SIGTERM);
  EXPECT_EQ((*waiter)->Wait(absl::Now() + kPatience), 128 + SIGTERM);
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(5)) << "no waiting out a blocking query";
  EXPECT_EQ((*waiter)->out(), "");
  EXPECT_THAT((*waiter)->err(), HasSubstr("interrupted by signal 15 while waiting"));
}

TEST_F(RegistryctlWatchLockTest, SigtermIsForwardedToTheCommandAndTheLockIsReleased) {
  std::unique_ptr<Subprocess> holder = StartHolder("fwd", "echo holding; exec sleep 60");
  ASSERT_NE(holder, nullptr);
  holder->Signal(SIGTERM);
  EXPECT_EQ(holder->Wait(absl::Now() + kPatience), 128 + SIGTERM) << holder->err();
  RunResult next = RunCtl({"lock", "fwd", "--timeout-ms", "5000", "--", "true"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_LT(next.elapsed, absl::Seconds(5));
}

TEST_F(RegistryctlWatchLockTest, LostLockTerminatesTheCommandAndExitsThree) {
  // The script reports SIGTERM before dying, so the test sees the command was told.
  std::unique_ptr<Subprocess> holder =
      StartHolder("lost",
                  "trap 'echo terminated; exit 143' TERM; echo holding; "
                  "while :; do sleep 0.05; done");
  ASSERT_NE(holder, nullptr);
  const std::string lock_key = absl::StrCat(namespace_, "/lock/lost/");
  absl::StatusOr<std::string> session = KeySession(lock_key);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_FALSE(session->empty()) << lock_key << " is not held";
  ASSERT_TRUE(ExpireSession(*session).ok());
  EXPECT_EQ(holder->ReadLine(absl::Now() + kPatience), "terminated");
  EXPECT_EQ(holder->Wait(absl::Now() + kPatience), 3);
  EXPECT_THAT(holder->err(),
              AllOf(HasSubstr("lock lost"), HasSubstr("lost while the command ran")));
  EXPECT_EQ(RunCtl({"lock", "lost", "--timeout-ms", "5000", "--", "true"}).exit_code, 0);
}

TEST_F(RegistryctlWatchLockTest, LockOfACommandThatDoesNotExistExits127) {
  RunResult lock = RunCtl({"lock", "x", "--", "/nonexistent/command"});
  EXPECT_EQ(lock.exit_code, 127);
  EXPECT_THAT(lock.err, HasSubstr("/nonexistent/command"));
  EXPECT_EQ(RunCtl({"lock", "x", "--timeout-ms", "0", "--", "true"}).exit_code, 0)
      << "the lock was released";
}

TEST_F(RegistryctlWatchLockTest, LockUsageErrorsExitTwo) {
  RunResult no_command = RunCtl({"lock", "x"});
  EXPECT_EQ(no_command.exit_code, 2);
  EXPECT_THAT(no_command.err, HasSubstr("CMD is missing"));
  RunResult bad_timeout = RunCtl({"lock", "x", "--timeout-ms=-5", "--", "true"});
  EXPECT_EQ(bad_timeout.exit_code, 2);
  EXPECT_THAT(bad_timeout.err, HasSubstr("-5"));
  // Values gflags would refuse with exit 1 and its own words.
  for (const char* value : {"abc", "99999999999999999999", "86400001"}) {
    RunResult refused = RunCtl({"lock", "x", absl::StrCat("--timeout-ms=", value), "--", "true"});
    EXPECT_EQ(refused.exit_code, 2) << value << ": " << refused.err;
    EXPECT_THAT(refused.err, HasSubstr("must be a number from 0 to 86400000")) << value;
  }
  RunResult wrong_command = RunCtl({"--timeout-ms=5", "get", "/k"});
  EXPECT_EQ(wrong_command.exit_code, 2);
  EXPECT_THAT(wrong_command.err, HasSubstr("only for 'lock'"));
  RunResult fair_elsewhere = RunCtl({"--fair", "get", "/k"});
  EXPECT_EQ(fair_elsewhere.exit_code, 2);
  EXPECT_THAT(fair_elsewhere.err, HasSubstr("flag '--fair' is only for 'lock'"));
}

TEST_F(RegistryctlWatchLockTest, FairLockIsAnotherLockThanThePlainOneOfTheSameName) {
  std::unique_ptr<Subprocess> holder = StartHolder("both", "echo holding; exec sleep 60");
  ASSERT_NE(holder, nullptr);
  // The plain lock "both" is held: the fair lock "both" is not.
  RunResult fair = RunCtl({"lock", "both", "--fair", "--timeout-ms=5000", "--", "echo", "fair"});
  EXPECT_EQ(fair.exit_code, 0) << fair.err;
  EXPECT_EQ(fair.out, "fair\n");
  RunResult plain = RunCtl({"lock", "both", "--timeout-ms=200", "--", "echo", "never"});
  EXPECT_EQ(plain.exit_code, 1) << plain.err;
  EXPECT_THAT(plain.err, HasSubstr("lock both"));
}

TEST_F(RegistryctlWatchLockTest, SemaphoreUsageErrorsExitTwoNamingTheLimit) {
  RunResult missing = RunCtl({"semaphore", "pool", "--", "true"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("'semaphore' needs flag '--limit'"));
  for (const char* bad : {"abc", "0", "-2", "1025", "2x", ""}) {
    RunResult result = RunCtl({"semaphore", "pool", absl::StrCat("--limit=", bad), "--", "true"});
    EXPECT_EQ(result.exit_code, 2) << bad;
    EXPECT_THAT(result.err, HasSubstr(absl::StrCat("flag '--limit' must be a number from 1 to "
                                                   "1024, got '",
                                                   bad, "'")));
  }
  for (const std::vector<std::string>& elsewhere :
       {std::vector<std::string>{"--limit=2", "get", "/k"},
        std::vector<std::string>{"lock", "pool", "--limit", "2", "--", "true"}}) {
    RunResult result = RunCtl(elsewhere);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("flag '--limit' is only for 'semaphore'"));
  }
  RunResult fair = RunCtl({"semaphore", "pool", "--limit=2", "--fair", "--", "true"});
  EXPECT_EQ(fair.exit_code, 2);
  EXPECT_THAT(fair.err, HasSubstr("flag '--fair' is only for 'lock'"));
  RunResult no_command = RunCtl({"semaphore", "pool", "--limit=2"});
  EXPECT_EQ(no_command.exit_code, 2);
  EXPECT_THAT(no_command.err, HasSubstr("CMD is missing"));
}

TEST_F(RegistryctlWatchLockTest, SemaphoreLetsLimitProcessesRunAtOnceAndTimesOutTheNext) {
  std::unique_ptr<Subprocess> first = StartPermitHolder("pool", 2, "echo holding; exec sleep 60");
  ASSERT_NE(first, nullptr);
  // `first` still runs its command: `second` printing "holding" means both hold a permit.
  std::unique_ptr<Subprocess> second = StartPermitHolder("pool", 2, "echo holding; exec sleep 60");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->Wait(absl::Now()), std::nullopt) << "first still holds its permit";
  // The wait is announced only if the first attempt (a session, then the semaphore's rounds)
  // ends before the deadline: under TSan that took more than 300 ms, hence 2 s.
  RunResult third =
      RunCtl({"semaphore", "pool", "--limit=2", "--timeout-ms=2000", "--", "echo", "never"});
  EXPECT_EQ(third.exit_code, 1) << third.err;
  EXPECT_EQ(third.out, "");
  EXPECT_THAT(third.err, AllOf(HasSubstr("semaphore pool: waiting for a permit"),
                               HasSubstr("not acquired within 2s")));
  first->Signal(SIGTERM);
  EXPECT_EQ(first->Wait(absl::Now() + kPatience), 128 + SIGTERM) << first->err();
  RunResult next =
      RunCtl({"semaphore", "pool", "--limit=2", "--timeout-ms=5000", "--", "echo", "ran"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.out, "ran\n");
  // The semaphore is apart from the lock of the same name.
  EXPECT_EQ(RunCtl({"lock", "pool", "--timeout-ms=5000", "--", "true"}).exit_code, 0);
}

TEST_F(RegistryctlWatchLockTest, SemaphoreLimitOtherThanTheHoldersExitsTwoNamingBoth) {
  std::unique_ptr<Subprocess> holder = StartPermitHolder("pool", 2, "echo holding; exec sleep 60");
  ASSERT_NE(holder, nullptr);
  RunResult other = RunCtl({"semaphore", "pool", "--limit=3", "--", "echo", "never"});
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_EQ(other.out, "");
  EXPECT_THAT(other.err, AllOf(HasSubstr("semaphore pool"), HasSubstr("limit in Consul is 2"),
                               HasSubstr("asked for 3")));
}

TEST_F(RegistryctlWatchLockTest, LostPermitTerminatesTheCommandAndExitsThree) {
  std::unique_ptr<Subprocess> holder =
      StartPermitHolder("gone", 2,
                        "trap 'echo terminated; exit 143' TERM; echo holding; "
                        "while :; do sleep 0.05; done");
  ASSERT_NE(holder, nullptr);
  absl::StatusOr<std::vector<ListedKey>> keys =
      KeysUnder(absl::StrCat(namespace_, "/semaphore/gone/"));
  ASSERT_TRUE(keys.ok()) << keys.status();
  std::string session;
  for (const ListedKey& key : *keys) {
    if (!key.session.empty()) session = key.session;
  }
  ASSERT_FALSE(session.empty()) << "no held entry under the semaphore";
  ASSERT_TRUE(ExpireSession(session).ok());
  EXPECT_EQ(holder->ReadLine(absl::Now() + kPatience), "terminated");
  EXPECT_EQ(holder->Wait(absl::Now() + kPatience), 3);
  EXPECT_THAT(holder->err(), AllOf(HasSubstr("semaphore gone: lost while the command ran"),
                                   HasSubstr("the permit was lost")));
}

TEST_F(RegistryctlWatchLockTest, ReadAndWriteAreLockFlagsThatExcludeEachOtherAndFair) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"lock", "cfg", "--read", "--write"}, "flags '--read' and '--write' cannot be combined"},
      {{"lock", "cfg", "--read", "--fair"}, "flags '--fair' and '--read' cannot be combined"},
      {{"lock", "cfg", "--write", "--fair"}, "flags '--fair' and '--write' cannot be combined"},
      {{"--read", "get", "/k"}, "flag '--read' is only for 'lock'"},
      {{"semaphore", "cfg", "--limit=2", "--write"}, "flag '--write' is only for 'lock'"}};
  for (auto [args, message] : refused) {
    if (args[0] != "--read") args.insert(args.end(), {"--", "echo", "never"});
    RunResult result = RunCtl(args);
    EXPECT_EQ(result.exit_code, 2) << message;
    EXPECT_EQ(result.out, "") << message;
    EXPECT_THAT(result.err, HasSubstr(message));
  }
}

TEST_F(RegistryctlWatchLockTest, ReadersRunAtOnceWhileAWriterTimesOutAndTheWriterRunsAfter) {
  std::unique_ptr<Subprocess> first =
      StartHolding({"lock", "cfg", "--read"}, "echo holding; exec sleep 60");
  ASSERT_NE(first, nullptr);
  // `first` still runs its command: `second` printing "holding" means both hold the read side.
  std::unique_ptr<Subprocess> second =
      StartHolding({"lock", "cfg", "--read"}, "echo holding; exec sleep 60");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->Wait(absl::Now()), std::nullopt) << "first still holds the read side";
  RunResult writer = RunCtl({"lock", "cfg", "--write", "--timeout-ms=300", "--", "echo", "never"});
  EXPECT_EQ(writer.exit_code, 1) << writer.err;
  EXPECT_EQ(writer.out, "");
  // ("waiting for the lock" comes only if the first attempt ended before the 300 ms did, which
  // a slow build need not manage.)
  EXPECT_THAT(writer.err, HasSubstr("write lock cfg: not acquired within 300ms"));
  // The plain lock of the same name is another lock.
  EXPECT_EQ(RunCtl({"lock", "cfg", "--timeout-ms=5000", "--", "true"}).exit_code, 0);
  for (Subprocess* reader : {first.get(), second.get()}) {
    reader->Signal(SIGTERM);
    EXPECT_EQ(reader->Wait(absl::Now() + kPatience), 128 + SIGTERM) << reader->err();
  }
  RunResult next = RunCtl({"lock", "cfg", "--write", "--timeout-ms=5000", "--", "echo", "wrote"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.out, "wrote\n");
}

TEST_F(RegistryctlWatchLockTest, LostWriteLockTerminatesTheCommandAndExitsThree) {
  std::unique_ptr<Subprocess> holder = StartHolding(
      {"lock", "cfg", "--write"},
      "trap 'echo terminated; exit 143' TERM; echo holding; while :; do sleep 0.05; done");
  ASSERT_NE(holder, nullptr);
  absl::StatusOr<std::vector<ListedKey>> keys = KeysUnder(absl::StrCat(namespace_, "/rwlock/cfg/"));
  ASSERT_TRUE(keys.ok()) << keys.status();
  std::string session;
  for (const ListedKey& key : *keys) {
    if (!key.session.empty()) session = key.session;
  }
  ASSERT_FALSE(session.empty()) << "no held entry under the read/write lock";
  ASSERT_TRUE(ExpireSession(session).ok());
  EXPECT_EQ(holder->ReadLine(absl::Now() + kPatience), "terminated");
  EXPECT_EQ(holder->Wait(absl::Now() + kPatience), 3);
  EXPECT_THAT(holder->err(), AllOf(HasSubstr("write lock cfg: lost while the command ran"),
                                   HasSubstr("the lock was lost")));
}

TEST_F(RegistryctlWatchLockTest, ArgumentsOfTheCommandAreNotTakenAsRegistryctlFlags) {
  RunResult lock =
      RunCtl({"lock", "args", "--", "/bin/sh", "-c", "echo \"$0 $1\"", "--servers", "--help"});
  EXPECT_EQ(lock.exit_code, 0) << lock.err;
  EXPECT_EQ(lock.out, "--servers --help\n");
}

TEST_F(RegistryctlWatchLockTest, HelpDescribesWatchLockAndTheLockLostExitCode) {
  RunResult help = RunProcess({REGISTRYCTL_BIN, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(
      help.out,
      AllOf(HasSubstr("watch KEY"), HasSubstr("--initial"), HasSubstr("lock NAME -- CMD ARGS..."),
            HasSubstr("--timeout-ms"), HasSubstr("--fair"), HasSubstr("3 the lock was lost"),
            HasSubstr("semaphore NAME --limit N -- CMD ARGS..."), HasSubstr("--limit"),
            HasSubstr("--read"), HasSubstr("--write"), HasSubstr("read/write lock NAME")));
}

// Needs the dev server's fault injection: registered for it only.
class RegistryctlLockFaultsTest : public RegistryctlWatchLockTest {};

TEST_F(RegistryctlLockFaultsTest, ASucceededCommandStaysSucceededWhenTheServerFailsAtTheEnd) {
  std::ofstream(config_, std::ios::app) << "    requestTimeoutMilliseconds: 300\n";
  const std::string fifo = absl::StrCat(ProcessTempDir(), "/", namespace_, ".fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // CMD holds the lock until the test writes a line into the fifo, then succeeds.
  std::unique_ptr<Subprocess> holder =
      StartHolder("end", absl::StrCat("echo holding; read line < '", fifo, "'"));
  ASSERT_NE(holder, nullptr);
  // From now on the server answers every request 500 "No cluster leader": the unlock and the
  // session destroy at the end cannot be done.
  ASSERT_TRUE(DevControl(server_address(), "/v1/_dev/fault/fail?count=1000000000").ok());
  std::ofstream(fifo) << "go\n";
  EXPECT_EQ(holder->Wait(absl::Now() + kPatience), 0) << holder->err();
  // The close warns that the session it could not destroy expires by its TTL, unless the
  // session's loss deadline passed first (every answer is "no leader", which moves nothing):
  // then there is no session left to destroy.
  EXPECT_THAT(holder->err(),
              AllOf(HasSubstr("warning: unlock end"),
                    AnyOf(AllOf(HasSubstr("warning: close"), HasSubstr("expires by its TTL")),
                          HasSubstr("lost (no renewal succeeded within"))));
  ASSERT_TRUE(DevControl(server_address(), "/v1/_dev/fault/clear").ok());
  EXPECT_EQ(RunCtl({"lock", "end", "--timeout-ms", "5000", "--", "true"}).exit_code, 0)
      << "free again once the leftover session expired";
}

}  // namespace
}  // namespace registry::integration
