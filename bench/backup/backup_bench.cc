// SPDX-License-Identifier: Apache-2.0
// backup_bench: `registryctl export` and `registryctl import` of --keys keys (100,000 by
// default), end to end through the real registryctl binary and plugin, with where the time goes,
// printed as one JSON object.
//
//   backup_bench [--keys=100000] [--value_bytes=100] [--ephemeral=10] [--rounds=1]
//                [--server=dev|consul|HOST:PORT] [--consul_cli]
//
// Setup (not measured): --keys persistent keys in 100 folders (/metadata/f-NN/k-N, written with
// one PersistBatch) and --ephemeral ephemeral keys of the driver's own repository, under a
// namespace of the run's own. Each round, one after the other:
//   export    `registryctl --config=... export /` to a file; the file must hold exactly the
//             persistent keys (the ephemeral ones left out);
//   dry_run   `registryctl import --dry-run FILE` (every entry checked, nothing written);
//   import    the namespace deleted, then `registryctl import FILE`; the keys read back must be
//             the ones exported, byte for byte.
//   consul_cli (with --consul_cli) the same file through the fetched Consul binary's own
//             `consul kv export` and `consul kv import` (after the namespace is deleted again),
//             for comparison: Consul's CLI writes one key per request.
// Each figure: wall time of the process and keys per second; on the dev server the requests it
// made (its /v1/_dev/stats counters, reset before each). Then, in this process, the same steps
// split into their parts (the plugin's ListEntries, formatting the file, parsing it, CheckBatch,
// PersistBatch), to say where the time goes. A benchmark, not a test: beyond the checks above it
// asserts nothing.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/monotonic.h"
#include "bench/common/bench_check.h"
#include "bench/common/bench_server.h"
#include "gflags/gflags.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/subprocess.h"
#include "nlohmann/json.hpp"
#include "plugin/registry_plugin.h"
#include "tools/ctl_backup_file.h"

DEFINE_string(server, "dev", "dev, consul (a real consul agent -dev) or HOST:PORT");
DEFINE_int32(keys, 100000, "persistent keys exported and imported");
DEFINE_int32(value_bytes, 100, "size of every value");
DEFINE_int32(ephemeral, 10, "ephemeral keys beside them, which export must leave out");
DEFINE_int32(rounds, 1, "rounds of export, dry run and import");
DEFINE_bool(consul_cli, false,
            "also time `consul kv export` and `consul kv import` of the same keys (the binary of "
            "$REGISTRY_TEST_CONSUL_BIN or scripts/get-consul.sh)");

namespace registry::bench {
namespace {

using Json = nlohmann::ordered_json;
using Entries = std::vector<Repository::KeyValue>;

// Milliseconds to a tenth, and rates to the key per second: the rest is noise.
double Millis(absl::Duration d) { return std::round(absl::ToDoubleMilliseconds(d) * 10) / 10; }
int64_t Rate(int keys, absl::Duration d) {
  return std::llround(keys / std::max(absl::ToDoubleSeconds(d), 1e-9));
}

// The keys of the run: 100 folders, as a metadata tree; values of --value_bytes bytes, each
// with bytes that are not UTF-8 so that exactness is checked too.
Entries MakeEntries(int keys, int value_bytes) {
  Entries entries;
  entries.reserve(keys);
  for (int i = 0; i < keys; ++i) {
    std::string value = absl::StrCat("\xff", i);
    value.push_back('\0');
    value.resize(value_bytes, 'v');
    entries.emplace_back(absl::StrCat("/metadata/f-", i % 100, "/k-", i), std::move(value));
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

// One measured registryctl run.
struct Run {
  absl::Duration elapsed;
  std::string out;
  std::map<std::string, uint64_t> requests;  // the dev server's, by endpoint
};

// Runs `argv` (registryctl or consul, then its subcommand), dying unless it exits 0.
Run RunCtl(const BenchServer& server, const std::vector<std::string>& argv) {
  server.ResetRequestCounts();
  const absl::Time start = MonotonicNow();
  integration::RunResult result = integration::RunProcess(argv, absl::Minutes(30));
  const absl::Duration elapsed = MonotonicNow() - start;
  if (result.exit_code != 0) {
    Die(absl::InternalError(absl::StrCat(argv[2], " exited ", result.exit_code, ": ", result.err)));
  }
  Run run{elapsed, std::move(result.out), {}};
  for (const auto& [endpoint, count] : server.RequestCounts()) {
    if (endpoint == "watches.woken" || endpoint == "session.renew" || count == 0) continue;
    run.requests[endpoint] = count;
  }
  return run;
}

Json FigureJson(const Run& run, int keys) {
  Json out{{"ms", Millis(run.elapsed)}, {"keys_per_s", Rate(keys, run.elapsed)}};
  if (!run.requests.empty()) out["requests"] = run.requests;
  return out;
}

// The persistent keys the namespace holds now, checked against `expected`.
void ExpectKeys(plugin::PluginRepository& repository, const Entries& expected, const char* when) {
  std::vector<Repository::StoredEntry> listed = Check(repository.ListEntries("/metadata"));
  size_t persistent = 0;
  for (const Repository::StoredEntry& entry : listed) {
    if (entry.ephemeral) continue;
    if (persistent >= expected.size() || entry.key != expected[persistent].first ||
        entry.value != expected[persistent].second) {
      Die(absl::DataLossError(
          absl::StrCat(when, ": key ", persistent, " is '", entry.key, "', not as written")));
    }
    ++persistent;
  }
  if (persistent != expected.size()) {
    Die(absl::DataLossError(
        absl::StrCat(when, ": ", persistent, " keys, ", expected.size(), " expected")));
  }
}

// The same steps in this process, split into their parts.
Json Breakdown(plugin::PluginRepository& repository, const std::string& file_path) {
  Json out;
  absl::Time start = MonotonicNow();
  std::vector<Repository::StoredEntry> listed = Check(repository.ListEntries("/"));
  out["export_list_entries_ms"] = Millis(MonotonicNow() - start);
  const std::string prefix = Check(repository.StoreKeyPrefix());
  start = MonotonicNow();
  std::vector<tools::KvFileEntry> file;
  file.reserve(listed.size());
  for (Repository::StoredEntry& entry : listed) {
    if (entry.ephemeral) continue;
    file.push_back({absl::StrCat(prefix, absl::string_view(entry.key).substr(1)), entry.flags,
                    std::move(entry.value)});
  }
  const std::string text = tools::FormatKvFile(file);
  out["export_format_ms"] = Millis(MonotonicNow() - start);

  std::ifstream in(file_path, std::ios::binary);
  const std::string read((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  start = MonotonicNow();
  std::vector<tools::KvFileEntry> parsed = Check(tools::ParseKvFile(read));
  Entries entries = Check(tools::ToRepositoryEntries(std::move(parsed), prefix));
  out["import_parse_ms"] = Millis(MonotonicNow() - start);
  start = MonotonicNow();
  Check(repository.CheckBatch(entries));
  out["import_check_batch_ms"] = Millis(MonotonicNow() - start);
  start = MonotonicNow();
  Check(repository.PersistBatch(entries));  // the same values again: Consul changes nothing
  out["import_persist_batch_ms"] = Millis(MonotonicNow() - start);
  return out;
}

int Main() {
  if (FLAGS_keys < 1 || FLAGS_value_bytes < 8 || FLAGS_ephemeral < 0 || FLAGS_rounds < 1) {
    Die(absl::InvalidArgumentError(
        "--keys and --rounds must be >= 1, --value_bytes >= 8, --ephemeral >= 0"));
  }
  std::unique_ptr<BenchServer> server =
      Check(BenchServer::Start(FLAGS_server, CONSUL_DEV_SERVER_PATH));
  const std::string ns =
      absl::StrCat("backup_bench/", absl::ToUnixMillis(absl::Now()), "-", getpid());
  std::shared_ptr<plugin::PluginLibrary> library = Check(plugin::LoadPluginFile(CONSUL_PLUGIN));
  std::unique_ptr<plugin::PluginRepository> repository =
      Check(library->CreateFromProps({{"namespace", ns}, {"server-lists", server->address()}}));

  const std::string dir = integration::ProcessTempDir();
  const std::string config = absl::StrCat(dir, "/backup_bench.yaml");
  std::ofstream(config) << "mode:\n  type: Cluster\n  repository:\n    type: Consul\n"
                           "    props:\n      namespace: "
                        << ns << "\n      server-lists: " << server->address()
                        << "\n      requestTimeoutMilliseconds: 60000\n";
  const std::string file = absl::StrCat(dir, "/backup.json");
  const std::vector<std::string> ctl = {REGISTRYCTL_BIN, "--config=" + config};
  auto command = [&](std::vector<std::string> args) {
    args.insert(args.begin(), ctl.begin(), ctl.end());
    return args;
  };

  const Entries entries = MakeEntries(FLAGS_keys, FLAGS_value_bytes);
  absl::Time start = MonotonicNow();
  Check(repository->PersistBatch(entries));
  const absl::Duration populate = MonotonicNow() - start;

  Json rounds = Json::array();
  for (int round = 0; round < FLAGS_rounds; ++round) {
    for (int i = 0; i < FLAGS_ephemeral; ++i) {
      Check(repository->PersistEphemeral(absl::StrCat("/metadata/live/i-", i), "instance"));
    }
    Run exported = RunCtl(*server, command({"export", "/"}));
    std::vector<tools::KvFileEntry> parsed = Check(tools::ParseKvFile(exported.out));
    if (parsed.size() != entries.size()) {
      Die(absl::DataLossError(absl::StrCat("export held ", parsed.size(), " keys, ", entries.size(),
                                           " persistent ones expected")));
    }
    std::ofstream(file, std::ios::binary | std::ios::trunc) << exported.out;
    Run dry_run = RunCtl(*server, command({"import", "--dry-run", file}));
    Check(repository->Delete("/"));
    Run imported = RunCtl(*server, command({"import", file}));
    ExpectKeys(*repository, entries, "after the import");
    Json figures{{"file_bytes", exported.out.size()},
                 {"export", FigureJson(exported, FLAGS_keys)},
                 {"dry_run", FigureJson(dry_run, FLAGS_keys)},
                 {"import", FigureJson(imported, FLAGS_keys)}};
    if (FLAGS_consul_cli) {
      const std::vector<std::string> consul = {integration::ConsulBinary(CONSUL_BIN), "kv"};
      auto kv = [&](std::vector<std::string> args) {
        args.insert(args.begin(), consul.begin(), consul.end());
        args.insert(args.begin() + 3, "-http-addr=http://" + server->address());
        return args;
      };
      Run consul_export = RunCtl(*server, kv({"export", ns + "/"}));
      if (consul_export.out != exported.out) {
        Die(absl::DataLossError("`consul kv export` and `registryctl export` differ"));
      }
      Check(repository->Delete("/"));
      Run consul_import = RunCtl(*server, kv({"import", "@" + file}));
      ExpectKeys(*repository, entries, "after `consul kv import`");
      figures["consul_cli"] = Json{{"export", FigureJson(consul_export, FLAGS_keys)},
                                   {"import", FigureJson(consul_import, FLAGS_keys)}};
    }
    rounds.push_back(std::move(figures));
  }
  Json breakdown = Breakdown(*repository, file);

  Json out;
  out["server"] = server->description();
  out["plugin"] =
      absl::StrCat(library->path(), " (ABI ", REGISTRY_PLUGIN_ABI_MAJOR(library->abi_version()),
                   ".", REGISTRY_PLUGIN_ABI_MINOR(library->abi_version()), ")");
  out["namespace"] = ns;
  out["keys"] = FLAGS_keys;
  out["value_bytes"] = FLAGS_value_bytes;
  out["ephemeral_keys"] = FLAGS_ephemeral;
  out["populate_persist_batch_ms"] = Millis(populate);
  out["rounds"] = rounds;
  out["in_process"] = breakdown;

  // Only a server that outlives the run keeps the keys; the delete is not measured.
  if (absl::Status deleted = repository->Delete("/"); !deleted.ok()) {
    std::fprintf(stderr, "backup_bench: leaving %s/ behind: %s\n", ns.c_str(),
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
  return registry::bench::Main();
}
