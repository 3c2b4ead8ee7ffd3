// SPDX-License-Identifier: Apache-2.0
// bridge_bench: the ShardingSphere bridge (plugin/java) next to the plugin's C ABI, on one server,
// in one run, printed as one JSON object.
//
//   bridge_bench [--server=dev|consul|HOST:PORT] [--ops=5000] [--watch_writes=1000]
//                [--warmup_percent=20] [--value_bytes=100] [--rounds=4] [--jvm_options='...']
//
// Two paths, three figures each:
//   c_abi   plugin::PluginRepository over the real libregistry_consul.so, loaded with
//           plugin::LoadPluginFile as a host does (kv_bench's path);
//   bridge  a JVM running BridgeBench.java, which gets the repository the way ShardingSphere does
//           (ServiceLoader, type "Consul", init) from the shipped jar, whose JNI glue hosts the
//           same plugin through the same C ABI.
//   persist  --ops persists of /persist/<i>, one at a time: ops/s and latency per call;
//   query    --ops gets of those keys (`query` on the bridge): ops/s and latency per call;
//   watch    a listener on /watch, then --watch_writes persists of /watch/k<i % 10>, each waited
//            for: latency from the persist call to the listener receiving its value.
// The first --warmup_percent of every figure's operations are made but not counted, on both paths
// alike: they let the JVM load and compile the bridge's code (and both open their connections)
// before the clocks run. Each round runs both paths, the C ABI first in even rounds and the bridge
// first in odd ones, so that neither always meets the server with fewer keys. Latencies are
// pooled over the rounds; ops/s is measured operations over their wall time. Ratios are bridge /
// C ABI. Client CPU per operation is the whole process's (the JVM's JIT and GC included). A
// benchmark, not a test: it asserts nothing, and fails only when an operation does.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/common/bench_check.h"
#include "bench/common/bench_server.h"
#include "gflags/gflags.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/subprocess.h"
#include "nlohmann/json.hpp"
#include "plugin/registry_plugin.h"

DEFINE_string(server, "dev", "dev, consul (a real consul agent -dev) or HOST:PORT");
DEFINE_int32(ops, 5000, "persists, and queries, per path and round, warm-up included");
DEFINE_int32(watch_writes, 1000, "watched writes per path and round, warm-up included");
DEFINE_int32(warmup_percent, 20, "first operations of every figure made but not counted");
DEFINE_int32(value_bytes, 100, "size of every value written");
DEFINE_int32(rounds, 4, "rounds; each runs both paths once");
DEFINE_string(jvm_options, "", "extra JVM options, space-separated (e.g. a JFR recording)");

namespace registry::bench {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC, as the JVM's System.nanoTime

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);  // this process only: the server is a child, not counted
  return absl::ToDoubleSeconds(absl::DurationFromTimeval(usage.ru_utime) +
                               absl::DurationFromTimeval(usage.ru_stime));
}

// The measured part of one figure in one round (the same fields BridgeBench.java prints).
struct Phase {
  int64_t ops = 0;
  double seconds = 0;
  double cpu_seconds = 0;
  std::vector<int64_t> latencies_ns;
};
using RoundResult = std::map<std::string, Phase>;  // "persist", "query", "watch"

// Times operations 0..n-1 of a figure, counting those from `warm` on (as BridgeBench.Phase).
class PhaseClock {
 public:
  explicit PhaseClock(int warm) : warm_(warm) {}
  template <typename Op>
  void Run(int i, Op op) {
    if (i == warm_) {
      cpu_start_ = ProcessCpuSeconds();
      start_ns_ = NowNs();
    }
    const int64_t begin = NowNs();
    const int64_t end = op();  // the operation's end: now, or when its event arrived
    if (i >= warm_) phase_.latencies_ns.push_back(end - begin);
  }
  Phase Stop() {
    phase_.seconds = (NowNs() - start_ns_) / 1e9;
    phase_.cpu_seconds = ProcessCpuSeconds() - cpu_start_;
    phase_.ops = static_cast<int64_t>(phase_.latencies_ns.size());
    return std::move(phase_);
  }

 private:
  const int warm_;
  int64_t start_ns_ = 0;
  double cpu_start_ = 0;
  Phase phase_;
};

// Arrival times of watch events by value, so that a late duplicate cannot hide the awaited one.
class Waiter {
 public:
  void Arrived(const std::string& value, int64_t now_ns) {
    absl::MutexLock lock(&mu_);
    arrived_ns_.emplace(value, now_ns);
  }
  int64_t Await(const std::string& value) {
    absl::MutexLock lock(&mu_);
    auto seen = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return arrived_ns_.contains(value); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&seen), absl::Seconds(10))) {
      Die(absl::DeadlineExceededError(absl::StrCat("no watch event carrying ", value, " in 10 s")));
    }
    return arrived_ns_[value];
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int64_t> arrived_ns_ ABSL_GUARDED_BY(mu_);
};

int Warm(int ops) { return ops * FLAGS_warmup_percent / 100; }

// As BridgeBench.watchValue: unique per write, padded to --value_bytes.
std::string WatchValue(int i) {
  std::string value = absl::StrCat("w", i, "-");
  if (value.size() < static_cast<size_t>(FLAGS_value_bytes)) value.resize(FLAGS_value_bytes, 'x');
  return value;
}

// One round of the C ABI path, in namespace `ns`.
RoundResult RunCAbi(plugin::PluginLibrary& library, const std::string& address,
                    const std::string& ns, int round) {
  std::unique_ptr<plugin::PluginRepository> repository =
      Check(library.CreateFromProps({{"namespace", ns}, {"server-lists", address}}));
  std::vector<std::string> keys;
  for (int i = 0; i < FLAGS_ops; ++i) keys.push_back(absl::StrCat("/persist/", i));
  const std::string value(FLAGS_value_bytes, static_cast<char>('a' + round % 26));
  RoundResult result;

  PhaseClock persist(Warm(FLAGS_ops));
  for (int i = 0; i < FLAGS_ops; ++i) {
    persist.Run(i, [&] {
      Check(repository->Persist(keys[i], value));
      return NowNs();
    });
  }
  result["persist"] = persist.Stop();

  PhaseClock query(Warm(FLAGS_ops));
  for (int i = 0; i < FLAGS_ops; ++i) {
    query.Run(i, [&] {
      const bool present = Check(repository->Get(keys[i])).has_value();
      const int64_t end = NowNs();
      if (!present) Die(absl::NotFoundError(absl::StrCat("Get ", keys[i], ": absent")));
      return end;
    });
  }
  result["query"] = query.Stop();

  Waiter waiter;
  plugin::PluginWatch watch =
      Check(repository->AddWatch("/watch", [&](const DataChangedEvent& event) {
        waiter.Arrived(event.value.value_or(""), NowNs());
      }));
  PhaseClock watched(Warm(FLAGS_watch_writes));
  for (int i = 0; i < FLAGS_watch_writes; ++i) {
    const std::string written = WatchValue(i);
    const std::string key = absl::StrCat("/watch/k", i % 10);
    watched.Run(i, [&] {
      Check(repository->Persist(key, written));
      return waiter.Await(written);
    });
  }
  result["watch"] = watched.Stop();
  watch.Remove();  // stopped before the waiter goes
  Check(repository->Close());
  return result;
}

Phase PhaseOf(const nlohmann::json& json) {
  Phase phase;
  phase.ops = json.at("ops").get<int64_t>();
  phase.seconds = json.at("seconds").get<double>();
  phase.cpu_seconds = json.at("cpu_seconds").get<double>();
  phase.latencies_ns = json.at("latencies_ns").get<std::vector<int64_t>>();
  return phase;
}

// ShardingSphere's jars as Maven resolved them (a file of one ':'-separated line), the bridge jar
// and BridgeBench's classes.
std::string BridgeClassPath() {
  std::ifstream in(BRIDGE_BENCH_CLASS_PATH_FILE);
  std::string resolved;
  std::getline(in, resolved);
  return absl::StrCat(resolved, ":", BRIDGE_BENCH_EXTRA_CLASS_PATH);
}

// One round of the bridge path: a JVM of its own, in namespace `ns`. Sets `jvm` to its name.
RoundResult RunBridge(const std::string& address, const std::string& ns, int round,
                      std::string& jvm) {
  std::vector<std::string> argv = {BRIDGE_BENCH_JAVA};
  for (absl::string_view option : absl::StrSplit(FLAGS_jvm_options, ' ', absl::SkipEmpty())) {
    argv.emplace_back(option);
  }
  for (std::string arg :
       {std::string("-cp"), BridgeClassPath(), std::string("registry.consul.bench.BridgeBench"),
        absl::StrCat("--server=", address), absl::StrCat("--namespace=", ns),
        absl::StrCat("--ops=", FLAGS_ops), absl::StrCat("--watch_writes=", FLAGS_watch_writes),
        absl::StrCat("--warmup_percent=", FLAGS_warmup_percent),
        absl::StrCat("--value_bytes=", FLAGS_value_bytes), absl::StrCat("--round=", round)}) {
    argv.push_back(std::move(arg));
  }
  const integration::RunResult run = integration::RunProcess(argv, absl::Minutes(10));
  if (run.exit_code != 0) {
    std::fprintf(stderr, "%s", run.err.c_str());
    Die(absl::InternalError(absl::StrCat("the bridge JVM exited with ", run.exit_code)));
  }
  // The JSON is the last line (the bridge logs to stderr, but a line before it would do no harm).
  const size_t last = run.out.rfind("\n{");
  const std::string line = last == std::string::npos ? run.out : run.out.substr(last + 1);
  const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
  if (!parsed.is_object()) Die(absl::InternalError("the bridge JVM printed no JSON: " + run.out));
  jvm = parsed.value("jvm", "");
  RoundResult result;
  for (const char* figure : {"persist", "query", "watch"}) result[figure] = PhaseOf(parsed[figure]);
  return result;
}

double Ms(int64_t ns) { return std::round(ns / 1e3) / 1e3; }  // to the microsecond
double Round3(double value) { return std::round(value * 1000) / 1000; }

// One figure of one path over every round: pooled latencies, ops/s, client CPU per operation.
struct Summary {
  double ops_per_s = 0;
  std::vector<double> per_round;
  std::map<double, int64_t> quantiles_ns;  // 0 (the minimum), 0.5, 0.9, 0.99, 1.0
  double cpu_us_per_op = 0;
};

Summary Summarize(const std::vector<RoundResult>& rounds, const std::string& figure) {
  Summary out;
  std::vector<int64_t> samples;
  double seconds = 0, cpu = 0;
  int64_t ops = 0;
  for (const RoundResult& round : rounds) {
    const Phase& phase = round.at(figure);
    samples.insert(samples.end(), phase.latencies_ns.begin(), phase.latencies_ns.end());
    ops += phase.ops;
    seconds += phase.seconds;
    cpu += phase.cpu_seconds;
    out.per_round.push_back(phase.seconds > 0 ? std::round(phase.ops / phase.seconds) : 0);
  }
  std::sort(samples.begin(), samples.end());
  // The same quantile as watch_bench: the sample at index floor(q * n).
  for (double q : {0.0, 0.5, 0.9, 0.99, 1.0}) {
    out.quantiles_ns[q] =
        samples.empty() ? 0 : samples[std::min(samples.size() - 1, size_t(q * samples.size()))];
  }
  out.ops_per_s = seconds > 0 ? std::round(ops / seconds) : 0;
  out.cpu_us_per_op = ops > 0 ? std::round(cpu / ops * 1e7) / 10 : 0;
  return out;
}

Json SummaryJson(const Summary& summary, bool with_rate) {
  Json out;
  if (with_rate) {
    out["ops_per_s"] = summary.ops_per_s;
    out["per_round_ops_per_s"] = summary.per_round;
  }
  // The fastest call is the least disturbed by scheduling: min against min is the path's own cost.
  out["min_ms"] = Ms(summary.quantiles_ns.at(0.0));
  out["p50_ms"] = Ms(summary.quantiles_ns.at(0.5));
  out["p90_ms"] = Ms(summary.quantiles_ns.at(0.9));
  out["p99_ms"] = Ms(summary.quantiles_ns.at(0.99));
  out["max_ms"] = Ms(summary.quantiles_ns.at(1.0));
  out["client_cpu_us_per_op"] = summary.cpu_us_per_op;
  return out;
}

int Run() {
  if (FLAGS_ops < 10 || FLAGS_watch_writes < 10 || FLAGS_rounds < 1 || FLAGS_value_bytes < 0 ||
      FLAGS_warmup_percent < 0 || FLAGS_warmup_percent > 90) {
    Die(absl::InvalidArgumentError(
        "--ops and --watch_writes must be >= 10, --rounds >= 1, --value_bytes >= 0, "
        "--warmup_percent 0..90"));
  }
  std::unique_ptr<BenchServer> server =
      Check(BenchServer::Start(FLAGS_server, CONSUL_DEV_SERVER_PATH));
  std::shared_ptr<plugin::PluginLibrary> library = Check(plugin::LoadPluginFile(CONSUL_PLUGIN));
  // A namespace no earlier run used, so that a HOST:PORT server's leftovers cannot interfere.
  const std::string run_ns =
      absl::StrCat("bridge_bench/", absl::ToUnixMillis(absl::Now()), "-", getpid());
  std::vector<RoundResult> c_abi, bridge;
  std::string jvm;
  for (int round = 0; round < FLAGS_rounds; ++round) {
    auto run_c_abi = [&] {
      c_abi.push_back(
          RunCAbi(*library, server->address(), absl::StrCat(run_ns, "/c_abi-", round), round));
    };
    auto run_bridge = [&] {
      bridge.push_back(
          RunBridge(server->address(), absl::StrCat(run_ns, "/bridge-", round), round, jvm));
    };
    if (round % 2 == 0) {
      run_c_abi();
      run_bridge();
    } else {
      run_bridge();
      run_c_abi();
    }
  }

  Json out;
  out["server"] = server->description();
  out["plugin"] =
      absl::StrCat(library->path(), " (ABI ", REGISTRY_PLUGIN_ABI_MAJOR(library->abi_version()),
                   ".", REGISTRY_PLUGIN_ABI_MINOR(library->abi_version()), ")");
  out["jvm"] = jvm;
  out["ops"] = FLAGS_ops;
  out["watch_writes"] = FLAGS_watch_writes;
  out["warmup_percent"] = FLAGS_warmup_percent;
  out["value_bytes"] = FLAGS_value_bytes;
  out["rounds"] = FLAGS_rounds;
  Json ratios;
  std::map<std::string, std::map<std::string, Summary>> summaries;
  for (auto& [name, rounds] : {std::pair{"c_abi", &c_abi}, std::pair{"bridge", &bridge}}) {
    Json path;
    for (const char* figure : {"persist", "query", "watch"}) {
      summaries[name][figure] = Summarize(*rounds, figure);
      path[figure] = SummaryJson(summaries[name][figure], std::string(figure) != "watch");
    }
    out[name] = path;
  }
  // Bridge / C ABI: the target is ops/s >= 0.9 and p99 <= 1.1.
  for (const char* figure : {"persist", "query", "watch"}) {
    const Summary& b = summaries["bridge"][figure];
    const Summary& c = summaries["c_abi"][figure];
    if (std::string(figure) != "watch") {
      ratios[absl::StrCat(figure, "_ops_per_s")] = Round3(b.ops_per_s / c.ops_per_s);
    }
    for (auto [q, label] : {std::pair{0.5, "p50"}, std::pair{0.99, "p99"}}) {
      ratios[absl::StrCat(figure, "_", label)] =
          Round3(static_cast<double>(b.quantiles_ns.at(q)) / c.quantiles_ns.at(q));
    }
  }
  out["ratios_bridge_to_c_abi"] = ratios;

  // Only a server that outlives the run keeps the keys; the delete is not measured.
  absl::StatusOr<integration::HttpReply> deleted = integration::HttpCall(
      "DELETE", absl::StrCat("http://", server->address(), "/v1/kv/", run_ns, "?recurse"));
  if (!deleted.ok() || deleted->status != 200) {
    std::fprintf(stderr, "bridge_bench: could not delete %s/\n", run_ns.c_str());
  }
  server.reset();
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace registry::bench

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return registry::bench::Run();
}
