// SPDX-License-Identifier: Apache-2.0
// kv_bench: the plugin's KV throughput next to a raw libcurl loop on the same server, in one run
// (--server: a dev server process, a real Consul agent, or HOST:PORT), printed as one JSON object.
//
//   kv_bench [--ops=5000] [--rounds=3] [--value_bytes=100] [--server=dev] [--figures=a,b,...]
//
// Figures, each --ops operations per round, one after the other:
//   raw_put / raw_get            PUT / GET /v1/kv/<ns>/raw/<i> on one reused libcurl easy handle;
//   plugin_persist / plugin_get  PluginRepository::Persist / Get of /persist/<i>, through the real
//                                plugin file loaded by the host wrapper (so the C ABI is crossed);
//   plugin_persist_batch         one PluginRepository::PersistBatch of --ops keys per round;
//   plugin_persist_ephemeral     PluginRepository::PersistEphemeral of /ephemeral/<i> (bound in the
//                                first round, bound again with a new value in later ones).
// Each round runs every figure once, in that order, so that a change of machine load during the
// run falls on all of them alike rather than on whichever figure ran last. Per figure: min,
// median and max ops/s (keys/s for the batch) over the rounds and, on the dev server only,
// requests per operation (its /v1/_dev/stats counters, reset before each figure's round; session
// renewals left out, they run on their own timer). Ratios are of medians, of the figures measured.
// --figures measures only those named (to profile the server under one kind of request). Every
// run writes under a namespace of its own, deleted at the end. A benchmark, not a test: it
// asserts nothing.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/monotonic.h"
#include "bench/common/bench_check.h"
#include "bench/common/bench_server.h"
#include "bench/kv/raw_kv_client.h"
#include "gflags/gflags.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "nlohmann/json.hpp"
#include "plugin/registry_plugin.h"

DEFINE_string(server, "dev", "dev, consul (a real consul agent -dev) or HOST:PORT");
DEFINE_int32(ops, 5000, "operations per figure and round (keys per PersistBatch call)");
DEFINE_int32(rounds, 3, "rounds; every figure is measured once per round");
DEFINE_int32(value_bytes, 100, "size of every value written");
DEFINE_string(figures, "",
              "comma-separated figures to measure (raw_put, raw_get, plugin_persist, plugin_get, "
              "plugin_persist_batch, plugin_persist_ephemeral); empty: all");

namespace registry::bench {
namespace {

using Json = nlohmann::ordered_json;
using Entries = std::vector<std::pair<std::string, std::string>>;

// One figure: its rate in each round and, on the dev server, the requests that made it.
struct Figure {
  std::vector<double> rates;                 // operations (keys) per second, one per round
  std::map<std::string, uint64_t> requests;  // by endpoint, summed over the rounds
  uint64_t operations = 0;                   // summed over the rounds
};

// Runs `round` (which performs `operations` operations, dying on any failure) on the monotonic
// clock and adds it to `figure`, with the requests the server counted meanwhile.
template <typename Round>
void MeasureRound(const BenchServer& server, int operations, Figure& figure, Round round) {
  server.ResetRequestCounts();
  const absl::Time start = MonotonicNow();
  round();
  const absl::Duration elapsed = MonotonicNow() - start;
  figure.rates.push_back(operations / absl::ToDoubleSeconds(elapsed));
  figure.operations += operations;
  for (const auto& [endpoint, count] : server.RequestCounts()) {
    // watches.woken counts wake-ups, not requests; renewals follow the session's timer.
    if (endpoint == "watches.woken" || endpoint == "session.renew" || count == 0) continue;
    figure.requests[endpoint] += count;
  }
}

// Rates to the operation per second and ratios to three digits: the rest is noise.
int64_t RoundRate(double rate) { return std::llround(rate); }
double RoundRatio(double ratio) { return std::round(ratio * 1000) / 1000; }

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// `figure` as JSON; `unit` names its rate ("ops_per_s" or "keys_per_s").
Json FigureJson(const Figure& figure, const char* unit, bool server_counts_requests) {
  Json out;
  out[unit] = {{"min", RoundRate(*std::min_element(figure.rates.begin(), figure.rates.end()))},
               {"median", RoundRate(Median(figure.rates))},
               {"max", RoundRate(*std::max_element(figure.rates.begin(), figure.rates.end()))}};
  Json per_round = Json::array();
  for (double rate : figure.rates) per_round.push_back(RoundRate(rate));
  out["per_round"] = per_round;
  if (server_counts_requests) {
    uint64_t requests = 0;
    for (const auto& [endpoint, count] : figure.requests) requests += count;
    out["requests_per_op"] = static_cast<double>(requests) / figure.operations;
    out["requests"] = figure.requests;
  }
  return out;
}

constexpr absl::string_view kFigures[] = {"raw_put",
                                          "raw_get",
                                          "plugin_persist",
                                          "plugin_get",
                                          "plugin_persist_batch",
                                          "plugin_persist_ephemeral"};

// True if --figures is empty or names `figure`.
bool Wanted(absl::string_view figure) {
  if (FLAGS_figures.empty()) return true;
  for (absl::string_view name : absl::StrSplit(FLAGS_figures, ',')) {
    if (name == figure) return true;
  }
  return false;
}

// The keys of one run, made before any timing starts.
struct Keys {
  std::vector<std::string> raw;        // Consul keys "<ns>/raw/<i>"
  std::vector<std::string> persist;    // repository keys "/persist/<i>" ("<ns>/persist/<i>")
  std::vector<std::string> batch;      // repository keys "/batch/<i>"
  std::vector<std::string> ephemeral;  // repository keys "/ephemeral/<i>"
};

Keys MakeKeys(const std::string& name_space, int count) {
  Keys keys;
  for (int i = 0; i < count; ++i) {
    keys.raw.push_back(absl::StrCat(name_space, "/raw/", i));
    keys.persist.push_back(absl::StrCat("/persist/", i));
    keys.batch.push_back(absl::StrCat("/batch/", i));
    keys.ephemeral.push_back(absl::StrCat("/ephemeral/", i));
  }
  return keys;
}

class KvBench {
 public:
  KvBench(const BenchServer& server, RawKvClient& raw, plugin::PluginRepository& repository,
          Keys keys)
      : server_(server), raw_(raw), repository_(repository), keys_(std::move(keys)) {}

  // A get figure reads the keys its put figure writes: written here, unmeasured, when only the get
  // is wanted.
  void Prepare() {
    const std::string value(FLAGS_value_bytes, 'p');
    if (Wanted("raw_get") && !Wanted("raw_put")) {
      for (const std::string& key : keys_.raw) Check(raw_.Put(key, value));
    }
    if (Wanted("plugin_get") && !Wanted("plugin_persist")) {
      for (const std::string& key : keys_.persist) Check(repository_.Persist(key, value));
    }
  }

  // Every wanted figure once. The first round creates the keys, later ones overwrite them, alike
  // for the raw loop and the plugin; each round writes values of its own.
  void Round(int round) {
    const std::string value(FLAGS_value_bytes, static_cast<char>('a' + round % 26));
    Measure("raw_put", raw_put_, [&] {
      for (const std::string& key : keys_.raw) Check(raw_.Put(key, value));
    });
    Measure("plugin_persist", persist_, [&] {
      for (const std::string& key : keys_.persist) Check(repository_.Persist(key, value));
    });
    Measure("raw_get", raw_get_, [&] {
      for (const std::string& key : keys_.raw) Check(raw_.Get(key));
    });
    Measure("plugin_get", get_, [&] {
      for (const std::string& key : keys_.persist) CheckPresent(key, Check(repository_.Get(key)));
    });
    if (Wanted("plugin_persist_batch")) PersistBatchRound(value);
    Measure("plugin_persist_ephemeral", ephemeral_, [&] {
      for (const std::string& key : keys_.ephemeral) {
        Check(repository_.PersistEphemeral(key, value));
      }
    });
  }

  Json Report(bool server_counts_requests) const {
    Json out;
    auto add = [&](const char* name, const Figure& figure, const char* unit) {
      if (!figure.rates.empty()) out[name] = FigureJson(figure, unit, server_counts_requests);
    };
    add("raw_put", raw_put_, "ops_per_s");
    add("raw_get", raw_get_, "ops_per_s");
    add("plugin_persist", persist_, "ops_per_s");
    add("plugin_get", get_, "ops_per_s");
    add("plugin_persist_batch", batch_, "keys_per_s");
    add("plugin_persist_ephemeral", ephemeral_, "ops_per_s");
    Json ratios = Json::object();
    auto ratio = [&](const char* name, const Figure& of, const Figure& to) {
      if (of.rates.empty() || to.rates.empty()) return;
      ratios[name] = RoundRatio(Median(of.rates) / Median(to.rates));
    };
    ratio("plugin_persist_vs_raw_put", persist_, raw_put_);
    ratio("plugin_get_vs_raw_get", get_, raw_get_);
    ratio("plugin_persist_batch_vs_plugin_persist", batch_, persist_);
    ratio("plugin_persist_ephemeral_vs_raw_put", ephemeral_, raw_put_);
    out["ratios_of_medians"] = ratios;
    return out;
  }

 private:
  template <typename Body>
  void Measure(const char* name, Figure& figure, Body body) {
    if (Wanted(name)) MeasureRound(server_, FLAGS_ops, figure, body);
  }

  static void CheckPresent(const std::string& key, const std::optional<std::string>& value) {
    if (!value.has_value()) Die(absl::NotFoundError(absl::StrCat("Get ", key, ": absent")));
  }

  // One PersistBatch of every batch key.
  void PersistBatchRound(const std::string& value) {
    Entries entries;
    for (const std::string& key : keys_.batch) entries.emplace_back(key, value);
    size_t written = 0;
    absl::Status status;
    MeasureRound(server_, FLAGS_ops, batch_,
                 [&] { status = repository_.PersistBatch(entries, &written); });
    Check(status);
    if (written != entries.size()) {
      Die(absl::InternalError(
          absl::StrCat("PersistBatch wrote ", written, " of ", entries.size(), " keys")));
    }
  }

  const BenchServer& server_;
  RawKvClient& raw_;
  plugin::PluginRepository& repository_;
  const Keys keys_;
  Figure raw_put_, raw_get_, persist_, get_, batch_, ephemeral_;
};

// A namespace no earlier run used: the run's start in milliseconds and the process id.
std::string FreshNamespace() {
  return absl::StrCat("kv_bench/", absl::ToUnixMillis(absl::Now()), "-", getpid());
}

void CheckFlags() {
  if (FLAGS_ops < 1 || FLAGS_rounds < 1 || FLAGS_value_bytes < 0) {
    Die(absl::InvalidArgumentError("--ops and --rounds must be >= 1, --value_bytes >= 0"));
  }
  for (absl::string_view name : absl::StrSplit(FLAGS_figures, ',', absl::SkipEmpty())) {
    if (std::find(std::begin(kFigures), std::end(kFigures), name) == std::end(kFigures)) {
      Die(absl::InvalidArgumentError(absl::StrCat("--figures: no figure is named '", name, "'")));
    }
  }
}

// The first request of each client opens its connection (and the plugin's its client state):
// made here, so that no round pays for it.
void WarmUp(RawKvClient& raw, plugin::PluginRepository& repository, const std::string& ns) {
  const std::string raw_key = absl::StrCat(ns, "/raw/warm-up");
  Check(raw.Put(raw_key, "w"));
  Check(raw.Get(raw_key));
  Check(repository.Persist("/warm-up", "w"));
  Check(repository.Get("/warm-up").status());
}

int Run() {
  CheckFlags();
  std::unique_ptr<BenchServer> server =
      Check(BenchServer::Start(FLAGS_server, CONSUL_DEV_SERVER_PATH));
  const std::string ns = FreshNamespace();
  std::shared_ptr<plugin::PluginLibrary> library = Check(plugin::LoadPluginFile(CONSUL_PLUGIN));
  std::unique_ptr<plugin::PluginRepository> repository =
      Check(library->CreateFromProps({{"namespace", ns}, {"server-lists", server->address()}}));
  RawKvClient raw(server->address());
  WarmUp(raw, *repository, ns);
  const bool server_counts_requests = !server->RequestCounts().empty();

  KvBench bench(*server, raw, *repository, MakeKeys(ns, FLAGS_ops));
  bench.Prepare();
  for (int round = 0; round < FLAGS_rounds; ++round) bench.Round(round);

  Json out;
  out["server"] = server->description();
  out["plugin"] =
      absl::StrCat(library->path(), " (ABI ", REGISTRY_PLUGIN_ABI_MAJOR(library->abi_version()),
                   ".", REGISTRY_PLUGIN_ABI_MINOR(library->abi_version()), ")");
  out["namespace"] = ns;
  out["ops"] = FLAGS_ops;
  out["rounds"] = FLAGS_rounds;
  out["value_bytes"] = FLAGS_value_bytes;
  out.update(bench.Report(server_counts_requests));

  // Only a server that outlives the run keeps the keys; the delete is not measured.
  if (absl::Status deleted = raw.DeleteTree(ns + "/"); !deleted.ok()) {
    std::fprintf(stderr, "kv_bench: leaving %s/ behind: %s\n", ns.c_str(),
                 deleted.ToString().c_str());
  }
  repository.reset();
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
