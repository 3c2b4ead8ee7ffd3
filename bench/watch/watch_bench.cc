// watch_bench: a driver (not a test) that starts consul-dev-server as a child process and
// prints, as JSON:
//  - write -> callback latency (p50/p99/max) with 10,000 keys under the watched prefix (and with
//    10 keys, for comparison); each write waits for its callback, so nothing is coalesced;
//  - CPU time of the engine's background threads per event;
//  - background threads, process threads and RSS growth with 1, 100 and 10,000 watches, the
//    write -> callback latency with that many watches parked, and Close() time.
// Results are recorded in bench/README.md ("watch" section).
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/common/bench_server.h"
#include "consul/client.h"
#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"
#include "watch/watch_engine.h"

namespace registry::watch {
namespace {

long StatusField(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!absl::StartsWith(line, field)) continue;
    long value = 0;
    absl::string_view rest =
        absl::StripAsciiWhitespace(absl::StripSuffix(absl::StripPrefix(line, field), "kB"));
    if (absl::SimpleAtoi(rest, &value)) return value;
  }
  return -1;
}

absl::Duration ProcessCpu() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return absl::DurationFromTimeval(usage.ru_utime) + absl::DurationFromTimeval(usage.ru_stime);
}

absl::Duration ThisThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

// Receives events and lets the writer wait for the one carrying a given value.
class Waiter {
 public:
  DataChangedListener Listener() {
    return [this](const DataChangedEvent& event) {
      absl::MutexLock lock(&mu_);
      last_value_ = event.value.value_or("");
      received_at_ = absl::Now();
      ++events_;
    };
  }
  // Waits until an event carrying `value` arrived; returns its arrival time (InfinitePast on
  // timeout).
  absl::Time Await(const std::string& value, absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    auto seen = [this, &value]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return last_value_ == value; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&seen), timeout)) return absl::InfinitePast();
    return received_at_;
  }

 private:
  absl::Mutex mu_;
  std::string last_value_ ABSL_GUARDED_BY(mu_);
  absl::Time received_at_ ABSL_GUARDED_BY(mu_);
  size_t events_ ABSL_GUARDED_BY(mu_) = 0;
};

// Watch keys of one scale run; zero-padded so that no watch key is a prefix of another.
std::string WatchKey(int count, int i) { return absl::StrFormat("bench/scale-%d/w%05d", count, i); }

// Reads served so far by `server` (the dev server's counter "kv.get"; 0 on other servers).
uint64_t ServedReads(const bench::BenchServer& server) { return server.RequestCounts()["kv.get"]; }

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

nlohmann::ordered_json Percentiles(std::vector<absl::Duration> samples) {
  nlohmann::ordered_json out;
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  auto at = [&samples](double q) {
    return Ms(samples[std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()))]);
  };
  out["samples"] = samples.size();
  out["p50_ms"] = at(0.50);
  out["p90_ms"] = at(0.90);
  out["p99_ms"] = at(0.99);
  out["max_ms"] = Ms(samples.back());
  return out;
}

bool Populate(consul::Client& client, const std::string& prefix, int keys) {
  std::vector<consul::TxnOp> ops;
  for (int i = 0; i < keys; ++i) {
    ops.push_back(consul::TxnOp::Set(absl::StrCat(prefix, i), absl::StrCat("initial-", i)));
    // 64: the txn op limit of Consul 1.8.7 (later versions allow 128).
    if (ops.size() == 64 || i + 1 == keys) {
      absl::StatusOr<consul::TxnResult> written = client.Txn(ops);
      if (!written.ok() || !written->committed) {
        std::fprintf(
            stderr, "populating %s failed: %s\n", prefix.c_str(),
            written.ok() ? "rolled back" : std::string(written.status().message()).c_str());
        return false;
      }
      ops.clear();
    }
  }
  return true;
}

// Write -> callback latency and engine CPU per event with `keys` keys under one watched prefix.
nlohmann::ordered_json LatencyRun(consul::ClientOptions client_options, consul::Client& writer,
                                  int keys, int writes) {
  const std::string watched = absl::StrCat("bench/latency-", keys, "-keys");
  const std::string prefix = watched + "/";
  nlohmann::ordered_json out;
  out["keys_under_prefix"] = keys;
  if (!Populate(writer, prefix, keys)) return out;
  WatchEngineOptions options;
  options.block_query_wait = absl::Seconds(60);
  auto engine = WatchEngine::Create(client_options, options);
  if (!engine.ok()) return out;
  Waiter waiter;
  if (!(*engine)->Watch(watched, waiter.Listener()).ok()) return out;
  std::vector<absl::Duration> latencies;
  const absl::Duration cpu_start = ProcessCpu();
  const absl::Duration writer_cpu_start = ThisThreadCpu();
  for (int i = 0; i < writes; ++i) {
    const std::string value = absl::StrCat("v", i);
    const absl::Time start = absl::Now();
    if (!writer.KvPut(absl::StrCat(prefix, (i * 7919) % keys), value).ok()) continue;
    const absl::Time received = waiter.Await(value);
    if (received == absl::InfinitePast()) continue;
    latencies.push_back(received - start);
  }
  const absl::Duration engine_cpu =
      (ProcessCpu() - cpu_start) - (ThisThreadCpu() - writer_cpu_start);
  out["latency"] = Percentiles(latencies);
  out["engine_cpu_us_per_event"] =
      latencies.empty() ? 0.0 : absl::ToDoubleMicroseconds(engine_cpu) / latencies.size();
  (*engine)->Close();
  return out;
}

// Threads and RSS with `count` watches parked, plus latency and Close() time with all of them.
nlohmann::ordered_json ScaleRun(consul::ClientOptions client_options, consul::Client& writer,
                                const bench::BenchServer& server, int count) {
  nlohmann::ordered_json out;
  out["watches"] = count;
  const uint64_t parked_baseline = ServedReads(server);
  const long threads_before = StatusField("Threads:");
  const long rss_before = StatusField("VmRSS:");
  WatchEngineOptions options;
  options.block_query_wait = absl::Seconds(120);
  auto engine = WatchEngine::Create(client_options, options);
  if (!engine.ok()) return out;
  std::vector<std::unique_ptr<Waiter>> waiters;
  const absl::Time start = absl::Now();
  for (int i = 0; i < count; ++i) {
    waiters.push_back(std::make_unique<Waiter>());
    auto id = (*engine)->Watch(WatchKey(count, i), waiters.back()->Listener());
    if (!id.ok()) {
      out["error"] = std::string(id.status().message());
      return out;
    }
  }
  out["watch_calls_s"] = absl::ToDoubleSeconds(absl::Now() - start);
  // Every watch has made its starting listing and parked its first blocking query.
  while (ServedReads(server) < parked_baseline + 2 * static_cast<uint64_t>(count) &&
         absl::Now() - start < absl::Minutes(2)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  out["all_parked_s"] = absl::ToDoubleSeconds(absl::Now() - start);
  // One write to a few of the watches, each waited for: every query is parked by then.
  std::vector<absl::Duration> latencies;
  for (int i = 0; i < 50; ++i) {
    const int target = (i * 7919) % count;
    const std::string value = absl::StrCat("x", i);
    const absl::Time begin = absl::Now();
    if (!writer.KvPut(absl::StrCat(WatchKey(count, target), "/k"), value).ok()) continue;
    const absl::Time received = waiters[target]->Await(value);
    if (received != absl::InfinitePast()) latencies.push_back(received - begin);
  }
  out["latency"] = Percentiles(latencies);
  out["engine_background_threads"] = (*engine)->background_threads();
  out["process_threads_added"] = StatusField("Threads:") - threads_before;
  out["rss_mib_added"] = (StatusField("VmRSS:") - rss_before) / 1024.0;
  const absl::Time close_start = absl::Now();
  (*engine)->Close();
  out["close_ms"] = Ms(absl::Now() - close_start);
  return out;
}

// `only`: "latency" or "scale" runs one part; empty runs both. `which_server`: as
// bench/common/bench_server.h.
int Main(const std::string& only, const std::string& which_server) {
  absl::StatusOr<std::unique_ptr<bench::BenchServer>> server =
      bench::BenchServer::Start(which_server, CONSUL_DEV_SERVER_PATH);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  consul::ClientOptions client_options;
  client_options.servers = (*server)->address();
  auto writer = consul::Client::Create(client_options);
  if (!writer.ok()) return 1;
  // Wait for the server to answer.
  for (int i = 0; i < 100 && !(*writer)->Leader().ok(); ++i) absl::SleepFor(absl::Milliseconds(50));

  nlohmann::ordered_json report;
  report["server"] = (*server)->description();
  if (only.empty() || only == "latency") {
    report["latency_10000_keys"] = LatencyRun(client_options, **writer, 10000, 500);
    report["latency_10_keys"] = LatencyRun(client_options, **writer, 10, 1000);
  }
  if (only.empty() || only == "scale") {
    nlohmann::ordered_json scale = nlohmann::ordered_json::array();
    for (int count : {1, 100, 10000})
      scale.push_back(ScaleRun(client_options, **writer, **server, count));
    report["scale"] = scale;
  }

  server->reset();
  std::printf("%s\n", report.dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace registry::watch

// watch_bench [latency|scale] [dev|consul|HOST:PORT]
int main(int argc, char** argv) {
  return registry::watch::Main(argc > 1 ? argv[1] : "", argc > 2 ? argv[2] : "dev");
}
