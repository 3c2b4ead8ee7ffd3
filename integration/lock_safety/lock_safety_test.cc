// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/lock_safety_test.cc
//
// The lock-safety harness: 8 `registryctl lock` processes x 15 iterations contend for one lock
// while faults happen: on a consul-dev-server process, injected over its /v1/_dev/ endpoints
// (latency, bursts of 500s, dropped connections, every connection dropped, and forced expiry of
// the lock holder's session); on a real Consul server, killed and restarted every few seconds. Each
// critical section (critical_section.sh) increments a counter non-atomically with `registryctl get`
// / `registryctl put` and logs its steps with timestamps; section_log.h turns the evidence into the
// checks (harness_checks.h), and section_history.h turns the holds into a history for the history
// checker (integration/history), which judges them independently. The numbers are printed at the
// end. section_log_test.cc pins the checks themselves on hand-made evidence. The same harness runs
// the fair lock (`registryctl lock --fair`) and a semaphore of 3 permits (`registryctl semaphore
// --limit=3`: at most 3 sections at once).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "integration/history/history_check.h"
#include "integration/history/history_recorder.h"
#include "integration/lock_safety/dev_faults.h"
#include "integration/lock_safety/harness_checks.h"
#include "integration/lock_safety/section_history.h"
#include "integration/lock_safety/section_log.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/consul_cluster.h"
#include "integration/testing/delay_proxy.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

constexpr int kWorkers = 8;
constexpr int kIterations = 15;
constexpr char kNamespace[] = "lock_safety";
constexpr char kLockName[] = "safety";
// Sections pause 5 ms between their read and their write, but one in five pauses 0.35 s there
// (tag suffix "L": lost before it writes) and one in five 0.35 s after its write (suffix "W":
// lost after it wrote). That is long enough for the holder's lock monitor (which starts 200 ms
// into a hold) to notice a lost session while the section still runs.
constexpr char kLongPause[] = "0.35";
constexpr char kShortPause[] = "0.005";
constexpr char kNoPause[] = "0";
// Pause between two crashes of a real server (each costs it a couple of seconds).
const absl::Duration kCrashEvery = absl::Seconds(4);

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }
// What one harness run saw.
struct HarnessOutcome {
  int succeeded = 0;
  int lost = 0;
};

// Session TTL and request timeout of the workers: short by default, so that faults lose
// sessions quickly; a run that must ride through outages longer than that sets longer ones.
// `fair`: the workers take the fair lock; `semaphore_limit` > 0: a permit of the semaphore with
// that limit; `read_write`: workers 0-5 take the read side of a read/write lock, read the
// counter and write nothing, and workers 6-7 the write side.
struct HarnessOptions {
  int ttl_seconds = 2;
  int request_timeout_ms = 3000;
  bool fair = false;
  int semaphore_limit = 0;
  bool read_write = false;
};

constexpr int kReaders = 6;  // of the kWorkers, with `read_write`

bool Reads(const HarnessOptions& options, int worker) {
  return options.read_write && worker < kReaders;
}

// The registryctl command (and its flags) that takes what `options` asks for.
std::vector<std::string> TakeCommand(const HarnessOptions& options, int worker) {
  if (options.read_write) return {"lock", kLockName, Reads(options, worker) ? "--read" : "--write"};
  if (options.semaphore_limit > 0) {
    return {"semaphore", kLockName, absl::StrCat("--limit=", options.semaphore_limit)};
  }
  return {"lock", kLockName, options.fair ? "--fair" : "--fair=false"};
}

// The sessions holding the lock now (dev_faults.h's HolderSessions, for the kind of lock taken).
std::vector<std::string> HolderSessions(const std::string& address, const HarnessOptions& options) {
  if (options.semaphore_limit == 0 && !options.read_write) {
    return LockKeyHolders(
        address, absl::StrCat(kNamespace, options.fair ? "/fair-lock/" : "/lock/", kLockName, "/"));
  }
  return RecordHolders(
      address,
      absl::StrCat(kNamespace, options.read_write ? "/rwlock/" : "/semaphore/", kLockName, "/"));
}

// Has the history checker judge the holds of `all` too (section_history.h), in the history
// directory named after the test.
void CheckHistory(const std::vector<Section>& all, const HarnessOptions& options,
                  int64_t realtime_to_monotonic_ns) {
  absl::StatusOr<std::string> dir = history::FreshHistoryDir(history::CurrentTestHistoryName());
  ASSERT_TRUE(dir.ok()) << dir.status();
  const absl::Status recorded =
      RecordSections(all,
                     {.lock = kLockName,
                      .capacity = std::max(options.semaphore_limit, 1),
                      .skip_tag_prefix = options.read_write ? "rd-" : "",
                      .realtime_to_monotonic_ns = realtime_to_monotonic_ns},
                     *dir);
  ASSERT_TRUE(recorded.ok()) << recorded;
  history::ExpectHistoryChecked(*dir);
}

// Runs kWorkers x kIterations `registryctl lock` (or `semaphore`) processes against the server
// at `address` while `inject_faults` runs on another thread until its Notification is notified
// (it returns a summary for the report), then checks the evidence (CheckExclusion, or
// CheckPermits for a semaphore). `label` names the run.
HarnessOutcome RunHarness(const std::string& label, const std::string& address,
                          const std::function<std::string(absl::Notification&)>& inject_faults,
                          HarnessOptions times = {}) {
  const std::string dir = ProcessTempDir();
  const std::string log = absl::StrCat(dir, "/lock_safety.log");
  const std::string config = absl::StrCat(dir, "/lock_safety.yaml");
  std::ofstream(log, std::ios::trunc).close();
  // Lock-delay (500 ms) is Consul's guard against a holder that has not yet noticed its loss:
  // after a session expiry nobody acquires the lock for that long.
  std::ofstream(config) << "repository:\n  type: Consul\n  props:\n    namespace: " << kNamespace
                        << "\n    server-lists: " << address
                        << "\n    timeToLiveSeconds: " << times.ttl_seconds
                        << "\n    sessionLockDelayMilliseconds: 500\n"
                           "    lockRetryMilliseconds: 50\n    blockQueryTimeMilliseconds: 2000\n"
                           "    requestTimeoutMilliseconds: "
                        << times.request_timeout_ms << "\n    connectTimeoutMilliseconds: 1000\n";
  auto ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {REGISTRYCTL_BIN, "--config=" + config});
    return RunProcess(args);
  };
  HarnessOutcome outcome;
  RunResult initial = ctl({"put", "/safety/counter", "0"});
  EXPECT_EQ(initial.exit_code, 0) << initial.err;
  if (initial.exit_code != 0) return outcome;

  absl::Mutex mu;
  std::map<std::string, Section> sections;  // by tag
  std::vector<std::string> other_messages;  // what iterations that did not succeed printed
  absl::Notification done;
  std::string faults;
  const absl::Time start = absl::Now();
  const int64_t realtime_to_monotonic_ns = history::HostMonotonicNanos() - NowNs();
  std::thread injector([&] { faults = inject_faults(done); });
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int i = 0; i < kIterations; ++i) {
        const bool long_before = i % 5 == 4;
        const bool long_after = i % 5 == 1;
        const std::string role = times.read_write ? (Reads(times, w) ? "rd-" : "wr-") : "";
        const std::string tag =
            absl::StrCat(role, "w", w, "i", i, long_before ? "L" : "", long_after ? "W" : "");
        std::vector<std::string> args = {REGISTRYCTL_BIN, "--config=" + config};
        for (std::string& arg : TakeCommand(times, w)) args.push_back(std::move(arg));
        for (const char* arg : {"--timeout-ms=30000", "--", "/bin/sh", REGISTRY_CRITICAL_SECTION}) {
          args.push_back(arg);
        }
        for (const std::string& arg : {log, std::string(REGISTRYCTL_BIN), config, tag,
                                       std::string(long_before ? kLongPause : kShortPause),
                                       std::string(long_after ? kLongPause : kNoPause),
                                       std::string(Reads(times, w) ? "read" : "write")}) {
          args.push_back(arg);
        }
        RunResult run = RunProcess(args, absl::Seconds(60));
        absl::MutexLock lock(&mu);
        Section& s = sections[tag];
        s.tag = tag;
        s.exit_code = run.exit_code;
        s.process_end_ns = NowNs();
        if (run.exit_code != 0) {
          other_messages.push_back(absl::StrCat(tag, " (exit ", run.exit_code, "): ", run.err));
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  done.Notify();
  injector.join();
  const absl::Duration elapsed = absl::Now() - start;

  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  const absl::Status log_status = ApplyLog(text.str(), &sections);
  EXPECT_TRUE(log_status.ok()) << log_status;
  if (!log_status.ok()) return outcome;
  std::vector<Section> all;
  for (auto& [tag, s] : sections) all.push_back(s);
  RunResult final_read = ctl({"get", "/safety/counter"});
  EXPECT_EQ(final_read.exit_code, 0) << final_read.err;
  if (final_read.exit_code != 0) return outcome;
  const int64_t final_counter = std::stoll(final_read.out);

  int succeeded = 0, lost = 0, lost_after_writing = 0, timed_out = 0, failed = 0, ran = 0;
  for (const Section& s : all) {
    if (s.start.has_value()) ++ran;
    if (s.exit_code == 0) {
      ++succeeded;
      EXPECT_TRUE(s.wrote_value.has_value() || absl::StartsWith(s.tag, "rd-"))
          << s.tag << " succeeded without writing";
    } else if (s.lost()) {
      ++lost;
      if (s.wrote_value.has_value()) ++lost_after_writing;
    } else if (s.exit_code == 1) {
      ++timed_out;
    } else {
      ++failed;
    }
  }
  CheckHistory(all, times, realtime_to_monotonic_ns);
  const std::string checked = times.read_write            ? CheckReadWrite(all, final_counter)
                              : times.semaphore_limit > 0 ? CheckPermits(all, times.semaphore_limit)
                                                          : CheckExclusion(all, final_counter);
  EXPECT_GE(succeeded, kWorkers * kIterations / 2) << "the faults should not stop most work";

  std::printf(
      "lock_safety (%s): %d iterations (%d processes x %d) in %.1f s: %d succeeded, %d lost (%d of "
      "them after writing), %d timed out, %d failed otherwise; %d sections ran; %s; faults: %s\n",
      label.c_str(), kWorkers * kIterations, kWorkers, kIterations, absl::ToDoubleSeconds(elapsed),
      succeeded, lost, lost_after_writing, timed_out, failed, ran, checked.c_str(), faults.c_str());
  for (const std::string& message : other_messages) std::printf("  %s", message.c_str());
  ::testing::Test::RecordProperty("succeeded", succeeded);
  ::testing::Test::RecordProperty("lost", lost);
  ::testing::Test::RecordProperty("final_counter", static_cast<int>(final_counter));
  outcome.succeeded = succeeded;
  outcome.lost = lost;
  return outcome;
}

// The harness on a dev server process with faults injected (dev_faults.h); at least one
// holder's session is expired, and its holder must be told.
void RunUnderDevFaults(const std::string& label, const HarnessOptions& options) {
  absl::StatusOr<DevServerProcess> server =
      StartDevServer(REGISTRY_DEVSERVER_BIN, {"--session-ttl-min=1s", "--enable-fault-injection"});
  ASSERT_TRUE(server.ok()) << server.status();
  FaultCounts faults;
  const HarnessOutcome outcome = RunHarness(
      label, server->address,
      [&](absl::Notification& done) {
        faults = InjectFaults(
            server->address, ProcessTempDir() + "/lock_safety.log",
            [&] { return HolderSessions(server->address, options); }, done);
        return Describe(faults);
      },
      options);
  EXPECT_GE(faults.expiries, 1);
  EXPECT_GE(outcome.lost, 1) << "an expired session during a long section must be reported lost";
}

TEST(LockSafetyTest, EightProcessesUnderFaultsNeverShareTheLockAndLoseNoIncrement) {
  RunUnderDevFaults("dev server faults", {});
}

TEST(LockSafetyTest, EightProcessesUnderFaultsNeverShareTheFairLockAndLoseNoIncrement) {
  RunUnderDevFaults("dev server faults, fair lock", HarnessOptions{.fair = true});
}

TEST(LockSafetyTest, EightProcessesUnderFaultsNeverHoldMoreThanThreePermits) {
  RunUnderDevFaults("dev server faults, semaphore of 3", HarnessOptions{.semaphore_limit = 3});
}

TEST(LockSafetyTest, SixReadersAndTwoWritersUnderFaultsNeverLetAWriterShare) {
  RunUnderDevFaults("dev server faults, read/write lock", HarnessOptions{.read_write = true});
}

// The harness on a real Consul server without faults: every section gets through.
void RunOnARealServer(const std::string& label, const HarnessOptions& options) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> server =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  const HarnessOutcome outcome = RunHarness(
      label, (*server)->server_list(),
      [](absl::Notification& done) {
        done.WaitForNotification();
        return std::string("none");
      },
      options);
  EXPECT_EQ(outcome.succeeded, kWorkers * kIterations) << "every section gets through";
  if (::testing::Test::HasFailure()) (*server)->KeepFilesAndPrintLogs();
}

// Writers are not starved by the readers: every section gets through.
TEST(LockSafetyTest, SixReadersAndTwoWritersOnARealServerNeverLetAWriterShare) {
  RunOnARealServer("a real Consul server, read/write lock", HarnessOptions{.read_write = true});
}

TEST(LockSafetyTest, EightProcessesOnARealServerNeverHoldMoreThanThreePermits) {
  RunOnARealServer("a real Consul server, semaphore of 3", HarnessOptions{.semaphore_limit = 3});
}

TEST(LockSafetyTest, EightProcessesAcrossRealServerCrashesNeverShareTheLock) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> server =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  RunHarness("a real Consul server killed and restarted", (*server)->server_list(),
             [&](absl::Notification& done) {
               int crashes = 0;
               while (!done.WaitForNotificationWithTimeout(kCrashEvery)) {
                 (*server)->Kill(0);
                 EXPECT_TRUE((*server)->Restart(0).ok());
                 EXPECT_TRUE((*server)->AwaitServing(0, absl::Seconds(60)).ok());
                 ++crashes;
               }
               return absl::StrCat(crashes, " SIGKILL + restarts of the server");
             });
  if (::testing::Test::HasFailure()) (*server)->KeepFilesAndPrintLogs();
}

TEST(LockSafetyTest, EightProcessesAcrossLeaderKillsOfARealClusterNeverShareTheLock) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> cluster =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 3});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const HarnessOutcome outcome = RunHarness(
      "the leader of a real 3-server cluster killed and restarted", (*cluster)->server_list(),
      [&](absl::Notification& done) {
        int kills = 0;
        while (!done.WaitForNotificationWithTimeout(kCrashEvery)) {
          absl::StatusOr<int> leader = (*cluster)->AwaitLeader(absl::Seconds(30));
          if (!leader.ok()) continue;
          (*cluster)->Kill(*leader);
          EXPECT_TRUE((*cluster)->AwaitLeader(absl::Seconds(60), *leader).ok());
          EXPECT_TRUE((*cluster)->Restart(*leader).ok());
          EXPECT_TRUE((*cluster)->AwaitServing(*leader, absl::Seconds(60)).ok());
          ++kills;
        }
        return absl::StrCat(kills, " leaders killed");
      },
      // A lock waits at most a TTL for Consul and a call retries for its request
      // timeout: both longer than an election (about 3 s), as in production (30 s and
      // 10 s by default).
      HarnessOptions{.ttl_seconds = 10, .request_timeout_ms = 10000});
  // Every election is shorter than both: no iteration may fail.
  EXPECT_EQ(outcome.succeeded, kWorkers * kIterations);
  if (::testing::Test::HasFailure()) (*cluster)->KeepFilesAndPrintLogs();
}

TEST(LockSafetyTest, EightProcessesThroughAVaryingDelayToARealServerNeverShareTheLock) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> server =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string target = (*server)->address(0);
  absl::StatusOr<std::unique_ptr<DelayProxy>> proxy =
      DelayProxy::Start(std::stoi(target.substr(target.rfind(':') + 1)));
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  RunHarness("a real Consul server behind a varying delay", (*proxy)->address(),
             [&](absl::Notification& done) {
               // One-way delays and how long each lasts. The last one makes renewals (which may
               // wait until the loss deadline, TTL/2 = 1 s after they start) time out, so sessions
               // are suspended and some lost; a longer delay would only make Consul unreachable
               // for longer than the locks wait (a TTL).
               const std::pair<absl::Duration, absl::Duration> schedule[] = {
                   {absl::Milliseconds(10), absl::Seconds(2)},
                   {absl::Milliseconds(50), absl::Seconds(2)},
                   {absl::Milliseconds(300), absl::Seconds(1)},
                   {absl::Milliseconds(700), absl::Seconds(1)},
               };
               int spells = 0;
               for (int step = 0;; ++step) {
                 const auto& [delay, lasting] = schedule[step % 4];
                 (*proxy)->set_delay(delay);
                 if (done.WaitForNotificationWithTimeout(lasting)) break;
                 ++spells;
               }
               (*proxy)->set_delay(absl::ZeroDuration());
               return absl::StrCat(spells, " delay spells of 10 ms to 700 ms each way");
             });
  if (::testing::Test::HasFailure()) (*server)->KeepFilesAndPrintLogs();
}

}  // namespace
}  // namespace registry::integration
