// SPDX-License-Identifier: Apache-2.0
// lock_bench: measures the two-tier locks against a server (--server: a dev server process, a
// real Consul agent, or HOST:PORT) and prints one JSON object.
//
//   lock_bench [--cycles=1000] [--handoffs=200] [--settle_ms=5] [--server=dev]
//
//   - for the mutex, the fair lock, the semaphore (limit 1) and the write side of a read/write
//     lock (and, uncontended only, its read side): requests per uncontended Lock()+Unlock()
//     (from the dev server's request counters; the design targets are 2, 3, at most 4 and at
//     most 3) and the latency of such a
//     cycle; the handoff latency between two instances; and how many blocked waiters one
//     release wakes, with 1, 8 and 32 waiting instances (the dev server's count of woken
//     blocking queries; the fair lock's target is 1 whatever the number). A handoff: from the
//     holder's Unlock() call to the waiter's Lock() returning, the waiter having been blocked;
//   - the server's bare round trip (GET and PUT of a plain key) for comparison;
//   - the handoff between two threads of one process (one manager).
// A benchmark, not a test: it asserts nothing.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/common/bench_check.h"
#include "bench/common/bench_server.h"
#include "consul/client.h"
#include "gflags/gflags.h"
#include "instance/instance.h"
#include "lock/lock_manager.h"
#include "nlohmann/json.hpp"

DEFINE_int32(cycles, 1000, "uncontended lock+unlock cycles and bare round trips measured");
DEFINE_int32(handoffs, 200, "handoffs measured per scenario");
DEFINE_int32(settle_ms, 5, "pause before each release so that the waiter is blocked");
DEFINE_string(server, "dev", "dev, consul (a real consul agent -dev) or HOST:PORT");

namespace registry::lock {
namespace {

using ::registry::bench::Check;

double Millis(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

nlohmann::json Percentiles(std::vector<absl::Duration> samples) {
  if (samples.empty()) return nullptr;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    return Millis(samples[std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()))]);
  };
  return {{"p50_ms", at(0.50)},
          {"p99_ms", at(0.99)},
          {"max_ms", Millis(samples.back())},
          {"samples", samples.size()}};
}

ConsulRepositoryOptions Options(const bench::BenchServer& server) {
  ConsulRepositoryOptions options;
  options.client.servers = server.address();
  options.namespace_name = "bench";
  options.session_ttl = absl::Seconds(10);
  options.session_lock_delay = absl::Seconds(1);
  options.lock_retry = absl::Milliseconds(50);
  options.block_query_wait = absl::Seconds(10);
  return options;
}

// Two threads take turns on `first` and `second` (possibly the same lock object); returns the
// time from each release to the other thread's acquisition.
std::vector<absl::Duration> Handoffs(DistributedLock& first, DistributedLock& second) {
  absl::Mutex mu;
  int turn = 0;
  absl::Time released_at = absl::InfinitePast();
  std::vector<absl::Duration> samples;
  auto play = [&](int me, DistributedLock& lock) {
    // handoffs + 1 acquisitions in all, alternating: every one but the first is a handoff.
    const int rounds = (FLAGS_handoffs + 2 - me) / 2;
    for (int round = 0; round < rounds; ++round) {
      {
        struct Turn {
          int* turn;
          int me;
        } mine{&turn, me};
        absl::MutexLock guard(&mu);
        mu.Await(absl::Condition(
            +[](Turn* t) { return *t->turn == t->me; }, &mine));
      }
      Check(lock.Lock());  // blocks until the other side releases
      const absl::Time acquired = absl::Now();
      {
        absl::MutexLock guard(&mu);
        if (released_at != absl::InfinitePast()) samples.push_back(acquired - released_at);
        turn = 1 - me;
      }
      absl::SleepFor(absl::Milliseconds(FLAGS_settle_ms));  // the other side blocks meanwhile
      {
        absl::MutexLock guard(&mu);
        released_at = absl::Now();
      }
      Check(lock.Unlock());
    }
  };
  std::thread a([&] { play(0, first); });
  std::thread b([&] { play(1, second); });
  a.join();
  b.join();
  return samples;
}

// The recipes measured. The semaphore has limit 1 here, so that its handoffs and wake-ups compare
// with the locks'.
// The read side of a read/write lock is measured uncontended only: its holders never wait for
// each other.
enum class Recipe { kMutex, kFair, kSemaphore, kWrite, kRead };
constexpr Recipe kRecipes[] = {Recipe::kMutex, Recipe::kFair, Recipe::kSemaphore, Recipe::kWrite};

// The lock `name` of `manager` made by `recipe`.
std::shared_ptr<DistributedLock> LockOf(LockManager& manager, const std::string& name,
                                        Recipe recipe) {
  switch (recipe) {
    case Recipe::kFair:
      return Check(manager.GetFairLock(name));
    case Recipe::kSemaphore:
      return Check(manager.GetSemaphore(name, 1));
    case Recipe::kWrite:
      return Check(manager.GetWriteLock(name));
    case Recipe::kRead:
      return Check(manager.GetReadLock(name));
    case Recipe::kMutex:
      break;
  }
  return Check(manager.GetLock(name));
}

const char* KindName(Recipe recipe) {
  switch (recipe) {
    case Recipe::kFair:
      return "fair";
    case Recipe::kSemaphore:
      return "semaphore";
    case Recipe::kWrite:
      return "write";
    case Recipe::kRead:
      return "read";
    case Recipe::kMutex:
      break;
  }
  return "mutex";
}

// A repository and its lock manager, made by the composition root. Declared in this order, so
// that the manager goes before the repository.
struct LockingInstance {
  std::unique_ptr<ConsulRepository> repository;
  std::unique_ptr<LockManager> manager;
};

LockingInstance NewLockingInstance(const ConsulRepositoryOptions& options,
                                   LockManagerOptions lock_options = {}) {
  ConsulInstance made = Check(NewConsulInstance(options));
  LockingInstance instance;
  instance.manager = Check(LockManager::Create(made.locks, std::move(lock_options)));
  instance.repository = std::move(made.repository);
  return instance;
}

// Uncontended Lock()+Unlock() cycles: their latency and, on the dev server, the requests each.
nlohmann::json Uncontended(const bench::BenchServer& server, const ConsulRepositoryOptions& options,
                           Recipe recipe) {
  LockingInstance instance = NewLockingInstance(options);
  std::shared_ptr<DistributedLock> lock = LockOf(*instance.manager, "uncontended", recipe);
  Check(lock->Lock());  // creates the instance session
  Check(lock->Unlock());
  server.ResetRequestCounts();
  std::vector<absl::Duration> cycles;
  for (int i = 0; i < FLAGS_cycles; ++i) {
    const absl::Time start = absl::Now();
    Check(lock->Lock());
    Check(lock->Unlock());
    cycles.push_back(absl::Now() - start);
  }
  uint64_t requests = 0;
  nlohmann::json by_endpoint;
  for (const auto& [endpoint, count] : server.RequestCounts()) {
    if (endpoint == "watches.woken") continue;  // not a request
    by_endpoint[endpoint] = count;
    if (endpoint != "session.renew") requests += count;  // renewals run on their own timer
  }
  nlohmann::json out = {{"cycle", Percentiles(cycles)}};
  if (!by_endpoint.is_null()) {  // only the dev server counts requests
    out["requests_per_cycle"] = static_cast<double>(requests) / FLAGS_cycles;
    out["requests"] = by_endpoint;
  }
  return out;
}

// How many blocked waiters one release wakes: `waiters` instances queue for the lock behind a
// holder; then each holder in turn releases after the next ones have blocked, and the dev
// server's count of woken blocking queries is read once the next holder has the lock. The
// mean over the releases; null unless the dev server.
nlohmann::json WokenPerRelease(const bench::BenchServer& server,
                               const ConsulRepositoryOptions& options, Recipe recipe, int waiters) {
  if (server.RequestCounts().empty()) return nullptr;  // only the dev server counts
  LockManagerOptions quiet;
  quiet.monitor_delay = absl::InfiniteDuration();  // no key watch of the holder in the counts
  struct Instance {
    LockingInstance parts;
    std::shared_ptr<DistributedLock> lock;
  };
  std::vector<Instance> instances(waiters + 1);
  const std::string name = absl::StrCat("herd-", KindName(recipe), "-", waiters);
  for (Instance& instance : instances) {
    instance.parts = NewLockingInstance(options, quiet);
    instance.lock = LockOf(*instance.parts.manager, name, recipe);
  }
  struct Turns {  // guarded fields must be members (clang refuses the annotation on locals)
    absl::Mutex mu;
    int acquisitions ABSL_GUARDED_BY(mu) = 0;      // by the waiters
    int releases_allowed ABSL_GUARDED_BY(mu) = 0;  // waiter holders allowed to release, in turn
  } turns;
  Check(instances[0].lock->Lock());
  std::vector<std::thread> threads;
  for (int i = 1; i <= waiters; ++i) {
    threads.emplace_back([&, i] {
      Check(instances[i].lock->Lock());
      {
        absl::MutexLock guard(&turns.mu);
        const int mine = ++turns.acquisitions;
        auto allowed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(turns.mu) {
          return turns.releases_allowed >= mine;
        };
        turns.mu.Await(absl::Condition(&allowed));
      }
      Check(instances[i].lock->Unlock());
    });
    // Queued in turn (the fair lock's order), and blocked before the first release.
    absl::SleepFor(absl::Milliseconds(FLAGS_settle_ms * 4));
  }
  absl::SleepFor(absl::Milliseconds(100));
  uint64_t woken = 0;
  for (int release = 0; release < waiters; ++release) {
    server.ResetRequestCounts();
    if (release == 0) {
      Check(instances[0].lock->Unlock());
    } else {
      absl::MutexLock guard(&turns.mu);
      ++turns.releases_allowed;  // the current holder (a waiter thread) releases
    }
    {
      absl::MutexLock guard(&turns.mu);
      auto acquired = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(turns.mu) {
        return turns.acquisitions > release;
      };
      turns.mu.Await(absl::Condition(&acquired));
    }
    absl::SleepFor(absl::Milliseconds(50));  // the losers of a mutex handoff block again
    woken += server.RequestCounts()["watches.woken"];
  }
  {
    absl::MutexLock guard(&turns.mu);
    ++turns.releases_allowed;
  }
  for (std::thread& thread : threads) thread.join();
  return static_cast<double>(woken) / waiters;
}

int Run() {
  std::unique_ptr<bench::BenchServer> server =
      Check(bench::BenchServer::Start(FLAGS_server, CONSUL_DEV_SERVER_PATH));
  const ConsulRepositoryOptions options = Options(*server);
  std::unique_ptr<consul::Client> raw = Check(consul::Client::Create(options.client));
  nlohmann::json out;
  out["server"] = server->description();

  // Bare round trips.
  Check(raw->KvPut("bench/plain", "v").status());
  std::vector<absl::Duration> gets, puts;
  for (int i = 0; i < FLAGS_cycles; ++i) {
    absl::Time start = absl::Now();
    Check(raw->KvGet("bench/plain").status());
    gets.push_back(absl::Now() - start);
    start = absl::Now();
    Check(raw->KvPut("bench/plain", std::to_string(i)).status());
    puts.push_back(absl::Now() - start);
  }
  out["bare_get"] = Percentiles(gets);
  out["bare_put"] = Percentiles(puts);

  for (Recipe recipe : kRecipes) {
    const char* kind = KindName(recipe);
    out["uncontended"][kind] = Uncontended(*server, options, recipe);
    // Handoff between two repository instances.
    LockingInstance first = NewLockingInstance(options);
    LockingInstance second = NewLockingInstance(options);
    out["handoff_between_instances"][kind] = Percentiles(Handoffs(
        *LockOf(*first.manager, "remote", recipe), *LockOf(*second.manager, "remote", recipe)));
    for (int waiters : {1, 8, 32}) {
      out["woken_per_release"][kind][std::to_string(waiters)] =
          WokenPerRelease(*server, options, recipe, waiters);
    }
  }

  out["uncontended"][KindName(Recipe::kRead)] = Uncontended(*server, options, Recipe::kRead);

  {  // Handoff between two threads of one process (tier 1: the same for both kinds).
    LockingInstance instance = NewLockingInstance(options);
    std::shared_ptr<DistributedLock> lock = Check(instance.manager->GetLock("local"));
    out["handoff_between_threads"] = Percentiles(Handoffs(*lock, *lock));
  }

  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace registry::lock

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return registry::lock::Run();
}
