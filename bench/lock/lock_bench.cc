// lock_bench: measures the two-tier locks against an in-process dev server and prints one JSON
// object.
//
//   lock_bench [--cycles=1000] [--handoffs=200] [--settle_ms=5]
//
//   - requests per uncontended Lock()+Unlock() (from the dev server's request counters; the
//     design target is 2) and the latency of such a cycle;
//   - the server's bare round trip (GET and PUT of a plain key) for comparison;
//   - handoff latency between two repository instances: from the holder's Unlock() call to the
//     waiter's Lock() returning, the waiter having been blocked on the key;
//   - the same between two threads of one process (one manager).
// A benchmark, not a test: it asserts nothing.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/common/bench_server.h"
#include "consul/client.h"
#include "gflags/gflags.h"
#include "lock/lock_manager.h"
#include "nlohmann/json.hpp"
#include "repository/consul_repository.h"

DEFINE_int32(cycles, 1000, "uncontended lock+unlock cycles and bare round trips measured");
DEFINE_int32(handoffs, 200, "handoffs measured per scenario");
DEFINE_int32(settle_ms, 5, "pause before each release so that the waiter is blocked");
DEFINE_string(server, "dev", "dev, consul (a real consul agent -dev) or HOST:PORT");

namespace registry::lock {
namespace {

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

[[noreturn]] void Die(const absl::Status& status) {
  std::fprintf(stderr, "lock_bench: %s\n", status.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Check(absl::StatusOr<T> value) {
  if (!value.ok()) Die(value.status());
  return *std::move(value);
}

void Check(const absl::Status& status) {
  if (!status.ok()) Die(status);
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

  {  // Uncontended cycles.
    std::unique_ptr<Repository> repository = Check(NewConsulRepository(options));
    std::unique_ptr<LockManager> manager = Check(NewLockManager(*repository));
    std::shared_ptr<DistributedLock> lock = Check(manager->GetLock("uncontended"));
    Check(lock->Lock());  // creates the instance session
    Check(lock->Unlock());
    server->ResetRequestCounts();
    std::vector<absl::Duration> cycles;
    for (int i = 0; i < FLAGS_cycles; ++i) {
      const absl::Time start = absl::Now();
      Check(lock->Lock());
      Check(lock->Unlock());
      cycles.push_back(absl::Now() - start);
    }
    uint64_t requests = 0;
    nlohmann::json by_endpoint;
    for (const auto& [endpoint, count] : server->RequestCounts()) {
      by_endpoint[endpoint] = count;
      if (endpoint != "session.renew") requests += count;  // renewals run on their own timer
    }
    out["uncontended"] = {{"cycle", Percentiles(cycles)}};
    if (!by_endpoint.is_null()) {  // only the dev server counts requests
      out["uncontended"]["requests_per_cycle"] = static_cast<double>(requests) / FLAGS_cycles;
      out["uncontended"]["requests"] = by_endpoint;
    }
    manager.reset();
  }

  {  // Handoff between two repository instances.
    std::unique_ptr<Repository> first_repository = Check(NewConsulRepository(options));
    std::unique_ptr<Repository> second_repository = Check(NewConsulRepository(options));
    std::unique_ptr<LockManager> first = Check(NewLockManager(*first_repository));
    std::unique_ptr<LockManager> second = Check(NewLockManager(*second_repository));
    out["handoff_between_instances"] =
        Percentiles(Handoffs(*Check(first->GetLock("remote")), *Check(second->GetLock("remote"))));
  }

  {  // Handoff between two threads of one process.
    std::unique_ptr<Repository> repository = Check(NewConsulRepository(options));
    std::unique_ptr<LockManager> manager = Check(NewLockManager(*repository));
    std::shared_ptr<DistributedLock> lock = Check(manager->GetLock("local"));
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
