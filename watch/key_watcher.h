// SPDX-License-Identifier: Apache-2.0
// watch/key_watcher.h
//
// KeyWatcher follows single keys for code that needs more of an entry than data events carry:
// a lock monitor needs the session holding its key. The instance's watch engine
// (watch_engine.h) is the one implementation: key watches share its IO thread, back-off,
// failover and listener workers with the subtree watches. Code that only follows keys (the lock
// manager) sees this interface, not the engine.
//
// Thread safety: implementations allow every method to be called concurrently from any thread,
// including from inside an observer (see Remove()).
#ifndef WATCH_KEY_WATCHER_H_
#define WATCH_KEY_WATCHER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "consul/kv.h"

namespace registry::watch {

// A watch's id; unique within its engine and never reused. 0 is never an id.
using WatchId = uint64_t;

// Receives the state of one key: its entry, or nullopt when it does not exist.
using KeyObserver = std::function<void(const std::optional<consul::DirEntry>& entry)>;

struct KeyWatchOptions {
  // When the first read is made (on MonotonicNow()'s clock, base/monotonic.h); at once by
  // default.
  absl::Time start_at = absl::InfinitePast();
};

class KeyWatcher {
 public:
  virtual ~KeyWatcher() = default;

  // Follows the single key `consul_key` (no subtree). From options.start_at on, `observer` is
  // called with the key's state after the first read and after every change of it (a new
  // ModifyIndex, its creation or its deletion; rapid changes may be coalesced, the last state is
  // never lost), on a listener worker, never concurrently with itself. Failed reads are retried
  // with back-off and never reported. Contacts no server before returning. Errors:
  // InvalidArgument for an empty key or no observer; FailedPrecondition once closed. Remove()
  // ends it.
  virtual absl::StatusOr<WatchId> WatchKey(std::string consul_key, KeyObserver observer,
                                           KeyWatchOptions options) = 0;

  // Stops watch `id`. When it returns, its observer is not running and will never be called
  // again — except when called from inside that observer: then it returns at once and the
  // observer is not called again once the current call returns. Unknown ids are ignored.
  virtual void Remove(WatchId id) = 0;
};

}  // namespace registry::watch

#endif  // WATCH_KEY_WATCHER_H_
