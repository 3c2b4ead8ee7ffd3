// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/fair_lock_order_test.cc
//
// The fair lock across processes (`registryctl lock --fair`), on a consul-dev-server process and
// on a real Consul server: eight processes queued one after another behind a holder get the lock
// in the order they queued, one at a time; and a holder killed with SIGKILL leaves the queue once
// Consul ends its session (within two TTLs), after which the next waiter goes on (after the
// lock-delay). The same for a holder of a semaphore's permit (`registryctl semaphore`) and the
// writer of a read/write lock (`registryctl lock --write`).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/consul_cluster.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/eventually.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using registry::testing::kPatience;

constexpr int kWaiters = 8;
constexpr int kTtlSeconds = 2;
// Consul's guard against a holder that has not yet noticed that its session ended.
constexpr int kLockDelayMs = 500;
constexpr char kNamespace[] = "fair_order";
constexpr char kLockName[] = "queue";

// One run's files: the repository config, the sections' log and a FIFO the holder's command
// blocks on until the test writes to it.
struct RunFiles {
  std::string config;
  std::string log;
  std::string release;
};

RunFiles MakeRunFiles(const std::string& address, const std::string& tag) {
  const std::string dir = ProcessTempDir();
  RunFiles files{absl::StrCat(dir, "/", tag, ".yaml"), absl::StrCat(dir, "/", tag, ".log"),
                 absl::StrCat(dir, "/", tag, ".release")};
  std::ofstream(files.log, std::ios::trunc).close();
  unlink(files.release.c_str());
  EXPECT_EQ(mkfifo(files.release.c_str(), 0600), 0) << files.release;
  std::ofstream(files.config) << "repository:\n  type: Consul\n  props:\n    namespace: "
                              << kNamespace << "\n    server-lists: " << address
                              << "\n    timeToLiveSeconds: " << kTtlSeconds
                              << "\n    sessionLockDelayMilliseconds: " << kLockDelayMs
                              << "\n    blockQueryTimeMilliseconds: 2000\n";
  return files;
}

// How a process takes the lock: the fair lock, or a permit of a semaphore of limit 1.
const std::vector<std::string> kFair = {"lock", kLockName, "--fair"};
const std::vector<std::string> kSemaphoreOfOne = {"semaphore", kLockName, "--limit=1"};
const std::vector<std::string> kWriteLock = {"lock", kLockName, "--write"};

// `registryctl` taking the lock as `take` says, running `command` (a shell command line).
std::unique_ptr<Subprocess> StartLocker(const RunFiles& files, const std::string& command,
                                        const std::vector<std::string>& take = kFair) {
  std::vector<std::string> args = {REGISTRYCTL_BIN, "--config=" + files.config};
  args.insert(args.end(), take.begin(), take.end());
  for (const char* arg : {"--", "/bin/sh", "-c"}) args.push_back(arg);
  args.push_back(command);
  absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(args);
  EXPECT_TRUE(process.ok()) << process.status();
  return process.ok() ? *std::move(process) : nullptr;
}

// A holder: its command says "held" and blocks until the test writes to the FIFO.
std::unique_ptr<Subprocess> StartHolder(const RunFiles& files,
                                        const std::vector<std::string>& take = kFair) {
  std::unique_ptr<Subprocess> holder =
      StartLocker(files, absl::StrCat("echo held; read line < '", files.release, "'"), take);
  if (holder == nullptr) return nullptr;
  std::optional<std::string> line = holder->ReadLine(absl::Now() + kPatience);
  EXPECT_EQ(line.value_or(""), "held") << holder->err();
  return holder;
}

void Release(const RunFiles& files) {
  const int fd = open(files.release.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(write(fd, "go\n", 3), 3);
  close(fd);
}

// Waits until the queue of the lock holds `count` entries.
bool AwaitQueueLength(const std::string& address, size_t count) {
  const std::string prefix = absl::StrCat(kNamespace, "/fair-queue/", kLockName, "/");
  return registry::testing::Eventually(
      [&] {
        absl::StatusOr<std::vector<ListedKey>> queue = ListPrefix(address, prefix);
        return queue.ok() && queue->size() == count;
      },
      kPatience);
}

// A section's start and end, from the log lines "<start|end> <ns> <waiter>".
struct Section {
  int waiter = -1;
  int64_t start = 0;
  int64_t end = 0;
};

std::vector<Section> ReadSections(const std::string& log) {
  std::ifstream in(log);
  std::vector<Section> sections;
  std::string event;
  int64_t ns = 0;
  int waiter = 0;
  while (in >> event >> ns >> waiter) {
    if (event == "start") sections.push_back({waiter, ns, 0});
    if (event == "end" && !sections.empty() && sections.back().waiter == waiter) {
      sections.back().end = ns;
    }
  }
  return sections;
}

void ExpectFifoOrder(const std::string& address, const std::string& label) {
  const RunFiles files = MakeRunFiles(address, "fifo");
  std::unique_ptr<Subprocess> holder = StartHolder(files);
  ASSERT_NE(holder, nullptr);
  std::vector<std::unique_ptr<Subprocess>> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.push_back(StartLocker(
        files, absl::StrCat("echo start $(date +%s%N) ", i, " >> '", files.log,
                            "'; sleep 0.02; echo end $(date +%s%N) ", i, " >> '", files.log, "'")));
    ASSERT_NE(waiters.back(), nullptr);
    // Queued one after the other: waiter i is in the queue before waiter i + 1 starts.
    ASSERT_TRUE(AwaitQueueLength(address, i + 2)) << "waiter " << i << " did not queue";
  }
  Release(files);
  EXPECT_EQ(holder->Wait(absl::Now() + kPatience), 0) << holder->err();
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_EQ(waiters[i]->Wait(absl::Now() + kPatience), 0)
        << "waiter " << i << ": " << waiters[i]->err();
  }
  const std::vector<Section> sections = ReadSections(files.log);
  ASSERT_EQ(sections.size(), size_t{kWaiters});
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_EQ(sections[i].waiter, i)
        << "position " << i << " went to waiter " << sections[i].waiter;
    EXPECT_GT(sections[i].end, sections[i].start);
    if (i > 0) {
      EXPECT_GT(sections[i].start, sections[i - 1].end) << "sections overlapped";
    }
  }
  std::printf("fair lock order (%s): %d processes got the lock in the order they queued\n",
              label.c_str(), kWaiters);
}

// A holder (taking the lock as `take` says) is killed with SIGKILL while a waiter waits: Consul
// ends its session within two TTLs, deleting its queue entry and owner key (a semaphore: its
// entry), and the waiter goes on once the lock-delay is over.
void ExpectKilledHolderLeavesTheQueue(const std::string& address, const std::string& label,
                                      const std::vector<std::string>& take = kFair) {
  const RunFiles files = MakeRunFiles(address, "killed");
  std::unique_ptr<Subprocess> holder = StartHolder(files, take);
  ASSERT_NE(holder, nullptr);
  std::unique_ptr<Subprocess> waiter =
      StartLocker(files, absl::StrCat("echo got-it >> '", files.log, "'"), take);
  ASSERT_NE(waiter, nullptr);
  // A fair waiter queues an entry; a semaphore waiter makes none until it takes a permit.
  if (take == kFair) {
    ASSERT_TRUE(AwaitQueueLength(address, 2));
  }
  const absl::Time killed = absl::Now();
  holder->Signal(SIGKILL);
  EXPECT_EQ(waiter->Wait(absl::Now() + kPatience), 0) << waiter->err();
  const absl::Duration freed_after = absl::Now() - killed;
  // (Slack for a loaded machine: 2 s.)
  EXPECT_LT(freed_after, absl::Seconds(2 * kTtlSeconds + 2) + absl::Milliseconds(kLockDelayMs));
  // Never before the lock-delay: the killed holder might only have been cut off.
  EXPECT_GE(freed_after, absl::Milliseconds(kLockDelayMs));
  Release(files);  // the killed holder's command, orphaned, still waits on the FIFO
  std::printf(
      "%s (%s): a holder killed with SIGKILL was let go, the next waiter got the lock %.2f s "
      "later (TTL %d s, lock-delay %d ms)\n",
      take == kFair ? "fair lock" : (take == kWriteLock ? "write lock" : "semaphore"),
      label.c_str(), absl::ToDoubleSeconds(freed_after), kTtlSeconds, kLockDelayMs);
}

TEST(FairLockOrderTest, EightProcessesGetTheLockInTheOrderTheyQueued) {
  absl::StatusOr<DevServerProcess> server =
      StartDevServer(REGISTRY_DEVSERVER_BIN, {"--session-ttl-min=1s"});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectFifoOrder(server->address, "dev server");
}

TEST(FairLockOrderTest, AKilledHolderLeavesTheQueueWithinTwoTtls) {
  absl::StatusOr<DevServerProcess> server =
      StartDevServer(REGISTRY_DEVSERVER_BIN, {"--session-ttl-min=1s"});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectKilledHolderLeavesTheQueue(server->address, "dev server");
}

TEST(FairLockOrderTest, AKilledSemaphoreHolderLetsItsPermitGoWithinTwoTtls) {
  absl::StatusOr<DevServerProcess> server =
      StartDevServer(REGISTRY_DEVSERVER_BIN, {"--session-ttl-min=1s"});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectKilledHolderLeavesTheQueue(server->address, "dev server", kSemaphoreOfOne);
}

TEST(FairLockOrderTest, AKilledSemaphoreHolderOfARealServerLetsItsPermitGoWithinTwoTtls) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> server =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectKilledHolderLeavesTheQueue((*server)->address(0), "real Consul", kSemaphoreOfOne);
  if (::testing::Test::HasFailure()) (*server)->KeepFilesAndPrintLogs();
}

TEST(FairLockOrderTest, AKilledWriterLetsTheWriteLockGoWithinTwoTtls) {
  absl::StatusOr<DevServerProcess> server =
      StartDevServer(REGISTRY_DEVSERVER_BIN, {"--session-ttl-min=1s"});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectKilledHolderLeavesTheQueue(server->address, "dev server", kWriteLock);
}

TEST(FairLockOrderTest, AKilledWriterOfARealServerLetsTheWriteLockGoWithinTwoTtls) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> server =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectKilledHolderLeavesTheQueue((*server)->address(0), "real Consul", kWriteLock);
  if (::testing::Test::HasFailure()) (*server)->KeepFilesAndPrintLogs();
}

TEST(FairLockOrderTest, EightProcessesOnARealServerGetTheLockInTheOrderTheyQueued) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> server =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectFifoOrder((*server)->address(0), "real Consul");
  if (::testing::Test::HasFailure()) (*server)->KeepFilesAndPrintLogs();
}

TEST(FairLockOrderTest, AKilledHolderLeavesTheQueueOfARealServerWithinTwoTtls) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> server =
      ConsulCluster::Start({.binary = ConsulBinary(CONSUL_BIN), .servers = 1});
  ASSERT_TRUE(server.ok()) << server.status();
  ExpectKilledHolderLeavesTheQueue((*server)->address(0), "real Consul");
  if (::testing::Test::HasFailure()) (*server)->KeepFilesAndPrintLogs();
}

}  // namespace
}  // namespace registry::integration
