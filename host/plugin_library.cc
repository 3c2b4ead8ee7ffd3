// SPDX-License-Identifier: Apache-2.0
// host/plugin_library.cc: PluginLibrary (plugin_client.h), a loaded plugin and what it offers
// besides repositories (log sink, metrics).
#include <dlfcn.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "host/c_string_args.h"
#include "host/plugin_client.h"
#include "host/plugin_entries.h"

namespace registry::plugin {

absl::Status MissingEntries(absl::string_view path, uint32_t abi_version, const char* what,
                            uint32_t minor) {
  return absl::UnimplementedError(
      absl::StrCat("registry plugin ", path, " has no ", what, ": it negotiated ABI ",
                   REGISTRY_PLUGIN_ABI_MAJOR(abi_version), ".",
                   REGISTRY_PLUGIN_ABI_MINOR(abi_version), ", ", what, " need 1.", minor));
}

PluginLibrary::~PluginLibrary() {
  if (log_sink_ != nullptr) SetLogSink(nullptr, LogLevel::kWarn).IgnoreError();
  if (dl_handle_ != nullptr) dlclose(dl_handle_);
}

absl::Status PluginLibrary::SetLogSink(LogSink sink, LogLevel min_level) {
  if (!REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_LOG, set_log_sink)) {
    return MissingEntries(path_, api_.abi_version, "log sinks", REGISTRY_PLUGIN_ABI_MINOR_LOG);
  }
  auto next = sink ? std::make_unique<LogSink>(std::move(sink)) : nullptr;
  absl::MutexLock lock(&log_mu_);
  RegistryError error{};
  const int code = api_.set_log_sink(next != nullptr ? &LogTrampoline : nullptr, next.get(),
                                     static_cast<int32_t>(min_level), &error);
  absl::Status status = TakeStatus(api_, code, &error);
  // On success the old sink will never be called again; on failure it is still installed.
  if (status.ok()) log_sink_ = std::move(next);
  return status;
}

absl::StatusOr<std::string> PluginLibrary::MetricsText() const {
  if (!REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_METRICS, metrics_text)) {
    return MissingEntries(path_, api_.abi_version, "metrics", REGISTRY_PLUGIN_ABI_MINOR_METRICS);
  }
  char* text = nullptr;
  size_t text_len = 0;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(api_, api_.metrics_text(&text, &text_len, &error), &error));
  std::string copy(text, text_len);
  api_.release_value(text);
  return copy;
}

absl::StatusOr<std::vector<MetricSample>> PluginLibrary::Metrics() const {
  if (!REGISTRY_ENTRY_USABLE(api_, REGISTRY_PLUGIN_ABI_MINOR_METRICS, visit_metrics)) {
    return MissingEntries(path_, api_.abi_version, "metrics", REGISTRY_PLUGIN_ABI_MINOR_METRICS);
  }
  std::vector<MetricSample> samples;
  RegistryError error{};
  const int code = api_.visit_metrics(&CollectSample, &samples, &error);
  RETURN_IF_ERROR(TakeStatus(api_, code, &error));
  return samples;
}

void PluginLibrary::CollectSample(const RegistryMetricSample* sample, void* user_data) noexcept {
  try {
    MetricSample copy;
    copy.family = sample->family;
    copy.help = sample->help;
    copy.type = sample->type;
    copy.name = sample->name;
    for (size_t i = 0; i < sample->label_count; ++i) {
      copy.labels.emplace_back(sample->label_names[i], sample->label_values[i]);
    }
    copy.value = sample->value;
    static_cast<std::vector<MetricSample>*>(user_data)->push_back(std::move(copy));
  } catch (...) {
    // An exception must not cross the C boundary; the sample is lost.
  }
}

void PluginLibrary::LogTrampoline(int32_t level, int64_t unix_time_ms, const char* component,
                                  const char* message, void* user_data) noexcept {
  if (level < REGISTRY_LOG_ERROR || level > REGISTRY_LOG_DEBUG) return;
  try {
    (*static_cast<LogSink*>(user_data))(LogRecord{
        static_cast<LogLevel>(level), absl::FromUnixMillis(unix_time_ms), component, message});
  } catch (...) {
    // An exception must not cross the C boundary; the record is lost.
  }
}

absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::Wrap(int code,
                                                                      RegistryError* error,
                                                                      RegistryRepository* handle) {
  RETURN_IF_ERROR(TakeStatus(api_, code, error));
  return std::make_unique<PluginRepository>(shared_from_this(), handle);
}

absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::CreateFromYaml(
    absl::string_view yaml, const PropList& overrides) {
  RETURN_IF_ERROR(CheckCStringProps(overrides));
  CArrays c(overrides);
  RegistryRepository* handle = nullptr;
  RegistryError error{};
  // An empty string_view may carry a null data(); the table takes NULL as a missing argument.
  int code = api_.create_from_yaml(yaml.empty() ? "" : yaml.data(), yaml.size(), c.keys.data(),
                                   c.values.data(), overrides.size(), &handle, &error);
  return Wrap(code, &error, handle);
}

absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::CreateFromYamlFile(
    const std::string& path, const PropList& overrides) {
  RETURN_IF_ERROR(CStringArgument(path, "YAML file path").status());
  RETURN_IF_ERROR(CheckCStringProps(overrides));
  CArrays c(overrides);
  RegistryRepository* handle = nullptr;
  RegistryError error{};
  int code = api_.create_from_yaml_file(path.c_str(), c.keys.data(), c.values.data(),
                                        overrides.size(), &handle, &error);
  return Wrap(code, &error, handle);
}

absl::StatusOr<std::unique_ptr<PluginRepository>> PluginLibrary::CreateFromProps(
    const PropList& props) {
  RETURN_IF_ERROR(CheckCStringProps(props));
  CArrays c(props);
  RegistryRepository* handle = nullptr;
  RegistryError error{};
  int code = api_.create_from_props(c.keys.data(), c.values.data(), props.size(), &handle, &error);
  return Wrap(code, &error, handle);
}

}  // namespace registry::plugin
