// SPDX-License-Identifier: Apache-2.0
// repository/repository_watches.cc
#include "repository/repository_watches.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_text.h"

namespace registry {

absl::StatusOr<Repository::WatchId> RepositoryWatches::Add(absl::string_view key,
                                                           std::string consul_key,
                                                           DataChangedListener listener,
                                                           const DataListenerOptions& options) {
  watch::WatchOptions watch_options;
  watch_options.replay_existing = options.replay_existing;
  // No lock is held while the engine lists the subtree or calls back.
  absl::StatusOr<watch::WatchId> id =
      engine_.Watch(std::move(consul_key), std::move(listener), watch_options);
  if (!id.ok()) return id.status();
  absl::MutexLock lock(&mu_);
  if (closed_) {  // Close() ran since the caller's check: the engine was closed, which dropped it
    return absl::FailedPreconditionError("the repository is closed");
  }
  keys_.emplace(*id, std::string(key));
  return *id;  // the engine's id: unique and never reused within this repository
}

void RepositoryWatches::RemoveById(Repository::WatchId id) {
  Remove([id](Repository::WatchId watch, const std::string&) { return watch == id; });
}

void RepositoryWatches::RemoveByKey(absl::string_view key) {
  Remove([key](Repository::WatchId, const std::string& watched) { return watched == key; });
}

void RepositoryWatches::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  keys_.clear();
}

void RepositoryWatches::Remove(
    absl::FunctionRef<bool(Repository::WatchId, const std::string& key)> which) {
  std::vector<watch::WatchId> ids;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = keys_.begin(); it != keys_.end();) {
      if (which(it->first, it->second)) {
        ids.push_back(it->first);
        it = keys_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (watch::WatchId id : ids) engine_.Remove(id);  // waits for running calls, no lock held
}

}  // namespace registry
