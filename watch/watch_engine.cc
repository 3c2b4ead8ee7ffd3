// SPDX-License-Identifier: Apache-2.0
#include "watch/watch_engine.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "watch/io_loop.h"

namespace registry::watch {

absl::Status ValidateWatchEngineOptions(const WatchEngineOptions& options) {
  auto invalid = [](absl::string_view field, absl::Duration value, absl::string_view rule) {
    return absl::InvalidArgumentError(
        absl::StrCat("watch engine option ", field, ": ", absl::FormatDuration(value), " ", rule));
  };
  if (options.block_query_wait <= absl::ZeroDuration() ||
      options.block_query_wait > limits::kMaxBlockQueryWait) {
    return invalid("block_query_wait", options.block_query_wait, "is not in (0, 10m]");
  }
  if (options.retry_min <= absl::ZeroDuration()) {
    return invalid("retry_min", options.retry_min, "is not positive");
  }
  if (options.retry_max < options.retry_min) {
    return invalid("retry_max", options.retry_max, "is below retry_min");
  }
  if (options.dispatcher.stall_threshold <= absl::ZeroDuration()) {
    return invalid("dispatcher.stall_threshold", options.dispatcher.stall_threshold,
                   "is not positive");
  }
  if (options.dispatcher.idle_retire <= absl::ZeroDuration()) {
    return invalid("dispatcher.idle_retire", options.dispatcher.idle_retire, "is not positive");
  }
  if (options.dispatcher.max_workers < 1) {
    return absl::InvalidArgumentError("watch engine option dispatcher.max_workers: 0 is below 1");
  }
  if (options.dispatcher.batch_size < 1) {
    return absl::InvalidArgumentError("watch engine option dispatcher.batch_size: 0 is below 1");
  }
  if (options.split_guard_pause < absl::ZeroDuration()) {
    return invalid("split_guard_pause", options.split_guard_pause, "is negative");
  }
  if (options.max_queries_per_watch < 1 ||
      options.max_queries_per_watch > limits::kMaxWatchQueries) {
    return absl::InvalidArgumentError(
        absl::StrCat("watch engine option max_queries_per_watch: ", options.max_queries_per_watch,
                     " is not from 1 to ", limits::kMaxWatchQueries));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<WatchEngine>> WatchEngine::Create(
    consul::ClientOptions client_options, WatchEngineOptions options) {
  RETURN_IF_ERROR(ValidateWatchEngineOptions(options));
  ASSIGN_OR_RETURN(std::unique_ptr<consul::Client> client,
                   consul::Client::Create(std::move(client_options)));
  consul::Client* raw = client.get();
  std::unique_ptr<WatchEngine> engine(
      new WatchEngine(std::move(client), raw, std::move(options), nullptr));
  RETURN_IF_ERROR(engine->io_->Start());
  return engine;
}

absl::StatusOr<std::unique_ptr<WatchEngine>> WatchEngine::Create(consul::Client* client,
                                                                 WatchEngineOptions options,
                                                                 Dispatcher* listeners) {
  if (client == nullptr) return absl::InvalidArgumentError("watch engine: client is null");
  RETURN_IF_ERROR(ValidateWatchEngineOptions(options));
  std::unique_ptr<WatchEngine> engine(
      new WatchEngine(nullptr, client, std::move(options), listeners));
  RETURN_IF_ERROR(engine->io_->Start());
  return engine;
}

WatchEngine::WatchEngine(std::unique_ptr<consul::Client> owned_client, consul::Client* client,
                         WatchEngineOptions options, Dispatcher* listeners)
    : options_(std::move(options)),
      owned_client_(std::move(owned_client)),
      client_(client),
      io_(std::make_unique<internal::IoLoop>(client_, options_, listeners)) {}

WatchEngine::~WatchEngine() { io_.reset(); }

absl::StatusOr<WatchId> WatchEngine::Watch(std::string consul_key, DataChangedListener listener,
                                           WatchOptions options) {
  return io_->Watch(std::move(consul_key), std::move(listener), options);
}

absl::StatusOr<WatchId> WatchEngine::WatchKey(std::string consul_key, KeyObserver observer,
                                              KeyWatchOptions options) {
  return io_->WatchKey(std::move(consul_key), std::move(observer), options);
}

void WatchEngine::Remove(WatchId id) { io_->Remove(id); }

void WatchEngine::Close() { io_->Close(); }

size_t WatchEngine::background_threads() const { return io_->background_threads(); }

size_t WatchEngine::watch_count() const { return io_->watch_count(); }

}  // namespace registry::watch
