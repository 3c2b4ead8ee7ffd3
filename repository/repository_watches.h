// SPDX-License-Identifier: Apache-2.0
// repository/repository_watches.h
//
// RepositoryWatches keeps which repository key each of a repository's data watches is on, so
// that they can be removed by id (Repository::RemoveWatch) or by key (RemoveDataListener, every
// watch of it), and refuses new watches once closed. The watch engine runs them; no lock of this
// class is held while the engine lists, removes or calls back.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REPOSITORY_REPOSITORY_WATCHES_H_
#define REPOSITORY_REPOSITORY_WATCHES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "registry/repository.h"
#include "watch/watch_engine.h"

namespace registry {

class RepositoryWatches {
 public:
  // `engine` must outlive this object.
  explicit RepositoryWatches(watch::WatchEngine& engine) : engine_(engine) {}

  // Watches `consul_key` for the repository key `key`. Errors: the engine's (the caller prefixes
  // them), FailedPrecondition if Close() ran meanwhile.
  absl::StatusOr<Repository::WatchId> Add(absl::string_view key, std::string consul_key,
                                          DataChangedListener listener,
                                          const DataListenerOptions& options);
  // Remove the watch `id`, or every watch of `key`; return once none of their listeners runs
  // (unless called from inside one, see WatchEngine::Remove).
  void RemoveById(Repository::WatchId id);
  void RemoveByKey(absl::string_view key);
  // Forgets every watch and refuses new ones; the caller closes the engine.
  void Close();

 private:
  void Remove(absl::FunctionRef<bool(Repository::WatchId, const std::string& key)> which);

  watch::WatchEngine& engine_;
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<Repository::WatchId, std::string> keys_
      ABSL_GUARDED_BY(mu_);  // live watches' repository keys
};

}  // namespace registry

#endif  // REPOSITORY_REPOSITORY_WATCHES_H_
