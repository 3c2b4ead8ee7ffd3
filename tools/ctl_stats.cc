// SPDX-License-Identifier: Apache-2.0
// tools/ctl_stats.cc
//
// registryctl's view of the plugin's metrics (ABI 1.7): the `stats` command and the --stats flag.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/ctl_commands.h"
#include "tools/print_line.h"

namespace registry::tools {
namespace {

const char* TypeName(int32_t type) {
  switch (type) {
    case REGISTRY_METRIC_COUNTER:
      return "counter";
    case REGISTRY_METRIC_GAUGE:
      return "gauge";
    case REGISTRY_METRIC_HISTOGRAM:
      return "histogram";
  }
  return "untyped";
}

// {"name":...,"type":...,"labels":{...},"value":...}: one sample.
std::string SampleJson(const plugin::MetricSample& sample) {
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [name, value] : sample.labels) labels[name] = value;
  return nlohmann::json{{"name", sample.name},
                        {"type", TypeName(sample.type)},
                        {"labels", labels},
                        {"value", sample.value}}
      .dump();
}

}  // namespace

int PrintMetrics(const plugin::PluginLibrary& library, std::FILE* out, bool json, std::FILE* err) {
  if (json) {
    absl::StatusOr<std::vector<plugin::MetricSample>> samples = library.Metrics();
    if (!samples.ok()) return ReportError(err, "stats", samples.status());
    for (const plugin::MetricSample& sample : *samples) PrintLine(out, SampleJson(sample));
    return kExitOk;
  }
  absl::StatusOr<std::string> text = library.MetricsText();
  if (!text.ok()) return ReportError(err, "stats", text.status());
  std::fwrite(text->data(), 1, text->size(), out);
  std::fflush(out);
  return kExitOk;
}

int RunStats(const CommandContext& context, const std::vector<std::string>& arguments) {
  // One read (the root's child names: one cheap request), so that the figures say whether the
  // store answers (requests, connection state).
  absl::StatusOr<std::vector<std::string>> probed = context.repository->GetChildrenKeys("/");
  if (!probed.ok()) return ReportError(context.err, "stats: listing /", probed.status());
  return PrintMetrics(context.repository->library(), context.out, context.options.json,
                      context.err);
}

}  // namespace registry::tools
