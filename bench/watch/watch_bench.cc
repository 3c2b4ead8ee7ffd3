// SPDX-License-Identifier: Apache-2.0
// watch_bench: a driver (not a test) that starts consul-dev-server as a child process and
// prints, as JSON:
//  - write -> callback latency (p50/p99/max) with 10 keys under the watched prefix, with 10,000
//    keys directly under it and with 10,000 keys as 100 folders of 100 keys (the layout a split
//    watch can divide); each write waits for its callback, so nothing is coalesced. Per case
//    also the engine's CPU per event and the server's CPU per write (dev and consul only: the
//    server is our child process), and the dev server's reads and woken queries per write;
//  - background threads, process threads and RSS growth with 1, 100 and 10,000 watches, the
//    write -> callback latency with that many watches parked, and Close() time.
// Results are recorded in bench/README.md ("watch" section). Usage:
//   watch_bench [latency|scale] [dev|consul|HOST:PORT] [--writes=200] [--max_queries_per_watch=N]
//
// --writes: measured writes per latency case; --max_queries_per_watch: the latency engine's
// WatchEngineOptions::max_queries_per_watch (default limits::kDefaultWatchQueries).
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/limits.h"
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

// Receives events and lets the writer wait for the one carrying a given value. It remembers
// every value seen rather than the last one, so that an unrelated event arriving between the
// awaited one and Await() (a duplicate, a re-list's) cannot hide it.
class Waiter {
 public:
  DataChangedListener Listener() {
    return [this](const DataChangedEvent& event) {
      absl::MutexLock lock(&mu_);
      received_at_.emplace(event.value.value_or(""), absl::Now());
      ++events_;
    };
  }
  // Waits until an event carrying `value` arrived; returns its (first) arrival time
  // (InfinitePast on timeout).
  absl::Time Await(const std::string& value, absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    auto seen = [this, &value]()
                    ABSL_SHARED_LOCKS_REQUIRED(mu_) { return received_at_.contains(value); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&seen), timeout)) return absl::InfinitePast();
    return received_at_[value];
  }
  size_t events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  absl::Mutex mu_;
  std::unordered_map<std::string, absl::Time> received_at_ ABSL_GUARDED_BY(mu_);
  size_t events_ ABSL_GUARDED_BY(mu_) = 0;
};

// Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses), so
// that field n of proc(5) is at [n - 3]; empty if the process is gone.
std::vector<std::string> ProcStat(const std::string& pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return {};
  return absl::StrSplit(absl::string_view(stat).substr(name_end + 1), ' ', absl::SkipEmpty());
}

// The pid of the server BenchServer started. BenchServer does not expose it, but both kinds are
// our only live child (the dev server is spawned directly; the consul agent through `sh -c exec`,
// so the child is consul itself, and `consul version` has been reaped by then). nullopt unless
// exactly one live child exists, rather than charge the wrong process.
std::optional<std::string> ServerPid() {
  const std::string self = std::to_string(getpid());
  std::vector<std::string> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::vector<std::string> stat = ProcStat(pid);
    if (stat.size() > 1 && stat[1] == self && stat[0] != "Z") children.push_back(pid);
  }
  return children.size() == 1 ? std::optional(children[0]) : std::nullopt;
}

// User + system CPU time of process `pid` so far (10 ms resolution on most kernels); nullopt if
// unreadable.
std::optional<absl::Duration> ProcessCpuOf(const std::string& pid) {
  const std::vector<std::string> stat = ProcStat(pid);
  long utime = 0, stime = 0;
  if (stat.size() < 13 || !absl::SimpleAtoi(stat[11], &utime) ||
      !absl::SimpleAtoi(stat[12], &stime)) {
    return std::nullopt;
  }
  return absl::Seconds(1) * (utime + stime) / sysconf(_SC_CLK_TCK);
}

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

// Writes every key of `keys` (value "initial") in transactions of 64 ops, so that 10,000 keys
// take ~160 requests instead of 10,000.
bool Populate(consul::Client& client, const std::vector<std::string>& keys) {
  std::vector<consul::TxnOp> ops;
  for (size_t i = 0; i < keys.size(); ++i) {
    ops.push_back(consul::TxnOp::Set(keys[i], "initial"));
    // 64: the txn op limit of Consul 1.8.7 (later versions allow 128).
    if (ops.size() == 64 || i + 1 == keys.size()) {
      absl::StatusOr<consul::TxnResult> written = client.Txn(ops);
      if (!written.ok() || !written->committed) {
        std::fprintf(
            stderr, "populating %s failed: %s\n", keys[i].c_str(),
            written.ok() ? "rolled back" : std::string(written.status().message()).c_str());
        return false;
      }
      ops.clear();
    }
  }
  return true;
}

// `count` keys directly under `prefix` ("<prefix>/k-00000", ...).
std::vector<std::string> FlatKeys(const std::string& prefix, int count) {
  std::vector<std::string> keys;
  for (int i = 0; i < count; ++i) keys.push_back(absl::StrFormat("%s/k-%05d", prefix, i));
  return keys;
}

// `folders` folders of `per_folder` keys each ("<prefix>/f-000/k-000", ...).
std::vector<std::string> TreeKeys(const std::string& prefix, int folders, int per_folder) {
  std::vector<std::string> keys;
  for (int f = 0; f < folders; ++f) {
    for (int k = 0; k < per_folder; ++k)
      keys.push_back(absl::StrFormat("%s/f-%03d/k-%03d", prefix, f, k));
  }
  return keys;
}

// What every latency case shares.
struct LatencySetup {
  consul::ClientOptions client_options;
  consul::Client* writer = nullptr;
  const bench::BenchServer* server = nullptr;
  std::optional<std::string> server_pid;  // dev or consul: our child; HOST:PORT: none
  WatchEngineOptions engine_options;
  int writes = 200;
};

// Write -> callback latency, engine CPU per event and server cost per write with `keys` (all
// under `watched`/) under one watch. Each write goes to a random key (uniform over `keys`, so
// over every folder of a tree) and waits for its callback.
nlohmann::ordered_json LatencyRun(const LatencySetup& setup, const std::string& watched,
                                  const std::vector<std::string>& keys) {
  nlohmann::ordered_json out;
  out["keys_under_prefix"] = keys.size();
  auto engine = WatchEngine::Create(setup.client_options, setup.engine_options);
  if (!engine.ok()) {
    out["error"] = std::string(engine.status().message());
    return out;
  }
  if (!Populate(*setup.writer, keys)) {
    out["error"] = "populating the keys failed";
    return out;
  }
  Waiter waiter;
  if (auto id = (*engine)->Watch(watched, waiter.Listener()); !id.ok()) {
    out["error"] = std::string(id.status().message());
    return out;
  }
  std::mt19937 random(keys.size());  // fixed seed: every run writes the same keys
  std::uniform_int_distribution<size_t> pick(0, keys.size() - 1);
  std::vector<absl::Duration> latencies;
  auto write_and_wait = [&](int i) -> bool {
    const std::string value = absl::StrCat("v", i);
    const absl::Time start = absl::Now();
    if (!setup.writer->KvPut(keys[pick(random)], value).ok()) return false;
    const absl::Time received = waiter.Await(value);
    if (received == absl::InfinitePast()) return false;
    if (i >= 0) latencies.push_back(received - start);
    return true;
  };
  // One unmeasured write first: it lets a split watch park its queries, and pays for the
  // connections, before the clock runs.
  if (!write_and_wait(-1)) out["error"] = "the warm-up write got no callback within 10 s";

  std::map<std::string, uint64_t> counts_before = setup.server->RequestCounts();
  const size_t events_before = waiter.events();
  const std::optional<absl::Duration> server_cpu_start =
      setup.server_pid ? ProcessCpuOf(*setup.server_pid) : std::nullopt;
  const absl::Duration cpu_start = ProcessCpu();
  const absl::Duration writer_cpu_start = ThisThreadCpu();
  int writes = 0;
  for (; writes < setup.writes && !out.contains("error"); ++writes) {
    // Nothing is coalesced, so a missing callback is a lost event: stop rather than wait 10 s
    // for each of the remaining writes.
    if (!write_and_wait(writes)) out["error"] = absl::StrCat("write ", writes, " got no callback");
  }
  const absl::Duration engine_cpu =
      (ProcessCpu() - cpu_start) - (ThisThreadCpu() - writer_cpu_start);
  const std::optional<absl::Duration> server_cpu_end =
      setup.server_pid ? ProcessCpuOf(*setup.server_pid) : std::nullopt;
  const size_t events = waiter.events() - events_before;
  std::map<std::string, uint64_t> counts = setup.server->RequestCounts();

  out["writes"] = writes;
  out["latency"] = Percentiles(latencies);
  // More events than writes means duplicates (e.g. a split watch reporting a key twice).
  out["events"] = events;
  out["engine_cpu_us_per_event"] =
      events == 0 ? 0.0 : absl::ToDoubleMicroseconds(engine_cpu) / events;
  if (server_cpu_start && server_cpu_end && writes > 0) {
    out["server_cpu_ms_per_write"] = Ms(*server_cpu_end - *server_cpu_start) / writes;
  }
  // Dev server only: reads served (each a listing of the watched tree, or of one part of a
  // split one) and parked queries woken, per write. A query the engine has not re-parked yet
  // when a write lands returns at once without counting as woken, so woken can be below 1.
  if (!counts.empty() && writes > 0) {
    for (const auto& [name, counter] :
         {std::pair{"server_reads_per_write", "kv.get"},
          std::pair{"server_queries_woken_per_write", "watches.woken"}}) {
      out[name] = static_cast<double>(counts[counter] - counts_before[counter]) / writes;
    }
  }
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

struct Args {
  std::string only;            // "latency" or "scale" runs one part; empty runs both
  std::string server = "dev";  // as bench/common/bench_server.h
  int writes = 200;
  int max_queries_per_watch = limits::kDefaultWatchQueries;
};

int Main(const Args& args) {
  absl::StatusOr<std::unique_ptr<bench::BenchServer>> server =
      bench::BenchServer::Start(args.server, CONSUL_DEV_SERVER_PATH);
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
  bool failed = false;
  if (args.only.empty() || args.only == "latency") {
    LatencySetup setup;
    setup.client_options = client_options;
    setup.writer = writer->get();
    setup.server = server->get();
    setup.writes = args.writes;
    if (args.server == "dev" || args.server == "consul") {
      setup.server_pid = ServerPid();
      if (!setup.server_pid) std::fprintf(stderr, "server pid not found: no server CPU figures\n");
    }
    setup.engine_options.block_query_wait = absl::Seconds(60);
    setup.engine_options.max_queries_per_watch = args.max_queries_per_watch;
    report["max_queries_per_watch"] = setup.engine_options.max_queries_per_watch;
    report["split_threshold"] = setup.engine_options.split_threshold;
    report["writes_per_case"] = args.writes;
    // A fresh prefix per case and per run, so that no case sees another's keys or a previous
    // run's leftovers on a persistent server.
    const std::string run = absl::StrCat("bench/latency-", absl::ToUnixMillis(absl::Now()));
    const std::pair<const char*, std::vector<std::string>> cases[] = {
        {"keys_10", FlatKeys(run + "/keys_10", 10)},
        {"flat_10000", FlatKeys(run + "/flat_10000", 10000)},
        {"tree_10000", TreeKeys(run + "/tree_10000", 100, 100)},
    };
    consul::KvDeleteOptions recurse;
    recurse.recurse = true;
    for (const auto& [name, keys] : cases) {
      const std::string watched = absl::StrCat(run, "/", name);
      report[name] = LatencyRun(setup, watched, keys);
      failed |= report[name].contains("error");
      // Also after an error: a persistent HOST:PORT server should not keep 10,000 keys per run.
      if (!(*writer)->KvDelete(watched, recurse).ok()) {
        std::fprintf(stderr, "could not delete %s\n", watched.c_str());
      }
    }
  }
  if (args.only.empty() || args.only == "scale") {
    nlohmann::ordered_json scale = nlohmann::ordered_json::array();
    for (int count : {1, 100, 10000})
      scale.push_back(ScaleRun(client_options, **writer, **server, count));
    report["scale"] = scale;
  }

  server->reset();
  std::printf("%s\n", report.dump(2).c_str());
  // A lost event is a finding, not a figure: fail so that the CI smoke run notices.
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace registry::watch

// watch_bench [latency|scale] [dev|consul|HOST:PORT] [--writes=N] [--max_queries_per_watch=N]
int main(int argc, char** argv) {
  registry::watch::Args args;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    int* number = nullptr;
    absl::string_view value = arg;
    if (absl::ConsumePrefix(&value, "--writes=")) {
      number = &args.writes;
    } else if (absl::ConsumePrefix(&value, "--max_queries_per_watch=")) {
      number = &args.max_queries_per_watch;
    } else if (!absl::StartsWith(arg, "-") && positional < 2) {
      (positional++ == 0 ? args.only : args.server) = std::string(arg);
      continue;
    }
    // --writes must be >= 1; --max_queries_per_watch is passed on for the engine to validate.
    if (number == nullptr || !absl::SimpleAtoi(value, number) ||
        (number == &args.writes && *number < 1)) {
      std::fprintf(stderr,
                   "usage: watch_bench [latency|scale] [dev|consul|HOST:PORT] [--writes=200] "
                   "[--max_queries_per_watch=N]\nbad argument: %s\n",
                   argv[i]);
      return 2;
    }
  }
  return registry::watch::Main(args);
}
