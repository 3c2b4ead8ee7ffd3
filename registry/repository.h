// SPDX-License-Identifier: Apache-2.0
// registry/repository.h
//
// Repository is the cluster-mode store the middleware talks to: the C++ counterpart of
// ShardingSphere's ClusterPersistRepository. Keys are '/'-separated absolute paths
// ("/metadata/db/tables/t1") relative to the configured namespace; two repositories with
// different namespaces never see each other's keys.
//
// A valid key is valid UTF-8 (Consul's JSON would replace other bytes, so the key read back
// would differ), starts with '/', has no empty, "." or ".." segment, no control characters and no
// leading or trailing spaces; "/" alone names the root (valid for GetChildrenKeys and Delete
// only). Every method returns InvalidArgument, naming the key, for anything else.
//
// Writes whose reply is lost (the server applied the write and then failed, or answered 5xx)
// are not reported as failed or as conflicts: the Consul implementation reads the key to learn
// the outcome and writes again if the first write did not land. Unavailable from a write means
// that no server could tell, so its outcome is unknown.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REGISTRY_REPOSITORY_H_
#define REGISTRY_REPOSITORY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "registry/events.h"

namespace registry {

// The repository's view of its link to the store, reported to connection listeners.
enum class ConnectionState {
  kConnected,    // first session established
  kSuspended,    // the store stopped answering; ephemeral keys may still be alive
  kLost,         // the instance session is gone; its ephemeral keys and locks are gone too
  kReconnected,  // back to normal: after kSuspended, the session survived; after kLost, a new
                 // session exists and every ephemeral key has been persisted again
};

const char* ConnectionStateName(ConnectionState state);

struct DataListenerOptions {
  // Report every key that exists when the listener is registered as an ADDED event before any
  // other event. By default the existing state is the silent starting point.
  bool replay_existing = false;
};

class Repository {
 public:
  using ConnectionListener = std::function<void(ConnectionState)>;

  virtual ~Repository() = default;

  // Returns the value at `key`, or std::nullopt if the key does not exist (absent is not an
  // error). Errors: InvalidArgument for a malformed key; Unavailable if no server answered.
  virtual absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) = 0;

  // Returns the names (not paths) of the direct children of `key`, sorted and without
  // duplicates: with "/a/b" and "/a/c/d" stored, GetChildrenKeys("/a") is {"b", "c"}.
  // A key without children yields an empty vector.
  virtual absl::StatusOr<std::vector<std::string>> GetChildrenKeys(absl::string_view key) = 0;

  // Returns whether `key` itself holds a value.
  virtual absl::StatusOr<bool> IsExisted(absl::string_view key) = 0;

  // Creates or overwrites `key` with `value`. The key is persistent (not bound to a session).
  virtual absl::Status Persist(absl::string_view key, absl::string_view value) = 0;

  // Overwrites `key` with `value`; NotFound if the key does not exist (never creates it).
  virtual absl::Status Update(absl::string_view key, absl::string_view value) = 0;

  // Deletes `key` and its whole subtree. Deleting an absent key is not an error.
  virtual absl::Status Delete(absl::string_view key) = 0;

  // One key and its value (PersistBatch).
  using KeyValue = std::pair<std::string, std::string>;

  // Persists every entry, in order, as Persist would (a later entry of the same key wins). The
  // Consul repository checks every key and value first (InvalidArgument naming the first bad
  // one, and nothing is written), then writes as many keys per store transaction as the store
  // accepts, each transaction all or nothing. On another error, the message names the first
  // entry that is not known to be written: the entries before it are, and `*written` (when not
  // null) counts them; that entry and the ones after it are not, unless the error is
  // Unavailable (outcome unknown), in which case some of them may be. This default persists the
  // entries one by one.
  virtual absl::Status PersistBatch(const std::vector<KeyValue>& entries,
                                    size_t* written = nullptr) {
    size_t done = 0;
    absl::Status status;
    for (const auto& [key, value] : entries) {
      status = Persist(key, value);
      if (!status.ok()) break;
      ++done;
    }
    if (written != nullptr) *written = done;
    return status;
  }

  // Checks `entries` as PersistBatch checks them before it writes anything, and writes nothing:
  // OK iff PersistBatch would accept every entry; else InvalidArgument naming the first bad one,
  // whose index goes to `*bad_index` (when not null; entries.size() when every entry is good).
  // Lets a caller try a batch first (a restore's dry run). Unimplemented by default.
  virtual absl::Status CheckBatch(const std::vector<KeyValue>& entries,
                                  size_t* bad_index = nullptr) {
    if (bad_index != nullptr) *bad_index = entries.size();
    return absl::UnimplementedError("CheckBatch: this repository cannot check a batch");
  }

  // One key as the store holds it (ListEntries).
  struct StoredEntry {
    std::string key;         // the repository key, e.g. "/metadata/db"
    std::string value;       // its bytes, exactly as stored
    uint64_t flags = 0;      // the store's flags of the key (Consul's); 0 when never set
    bool ephemeral = false;  // bound to an instance (PersistEphemeral): it dies with that instance

    friend bool operator==(const StoredEntry&, const StoredEntry&) = default;
  };

  // Every key of `key`'s subtree ("/a" covers "/a" and "/a/b/c", never "/ab"; "/" the whole
  // namespace), sorted by key, from one consistent read of the store: ephemeral keys too, marked
  // as such, so a backup can leave them out. What the store keeps under the namespace that no
  // repository key names (lock state) is left out. Errors: InvalidArgument for a malformed key;
  // FailedPrecondition after Close(); Unavailable if the subtree could not be read;
  // Unimplemented by default.
  virtual absl::StatusOr<std::vector<StoredEntry>> ListEntries(absl::string_view key) {
    return absl::UnimplementedError(
        absl::StrCat("ListEntries '", key, "': this repository cannot list its entries"));
  }

  // The store's own name of the namespace root: the store calls key "/a/b" StoreKeyPrefix() +
  // "a/b" (Consul: "<namespace>/a/b"). For files in the store's own formats (a backup that
  // `consul kv import` reads). Unimplemented by default.
  virtual absl::StatusOr<std::string> StoreKeyPrefix() {
    return absl::UnimplementedError("StoreKeyPrefix: this repository has no store key names");
  }

  // Sets `key` to `value`, bound to this instance: the key disappears when this instance closes
  // or its session is lost for good, and is re-persisted after a session is re-created. Whoever
  // held the key before, after a successful return it holds `value` and belongs to this instance.
  virtual absl::Status PersistEphemeral(absl::string_view key, absl::string_view value) = 0;

  // Creates `key` bound to this instance unless it already exists. Returns true iff this call
  // created it; false if the key exists (e.g. a live session of another instance holds it).
  // Among concurrent callers, across processes, at most one gets true.
  virtual absl::StatusOr<bool> PersistExclusiveEphemeral(absl::string_view key,
                                                         absl::string_view value) = 0;

  // Registers `listener` for connection-state changes; returns an id for removal. Listeners are
  // called from a background thread, one at a time, never while a repository lock is held, and
  // never on the thread that renews the session: a listener may call any method (a LOST
  // listener's PersistEphemeral or lock waits for the new session and does not delay it). When
  // LOST arrives, every lock held with the lost session already reports lost().
  virtual int AddConnectionListener(ConnectionListener listener) = 0;

  // Removes a listener; after it returns the listener is not called again.
  virtual void RemoveConnectionListener(int id) = 0;

  // One registration made by Watch(); never 0, never reused by the repository.
  using WatchId = uint64_t;

  // Registers `listener` for the changes of `key` and of every key below it ("/a" covers "/a"
  // and "/a/b/c", never "/ab"; "/" covers the whole namespace) as ADDED / UPDATED / DELETED
  // events carrying repository keys (events.h), and returns the registration's id. Returns once
  // the subtree has been read: every change applied after the call returns is reported, and the
  // state read is reported only with options.replay_existing. No final state is lost: after
  // errors, server restarts or index resets the events still bring the listener's view to the
  // store's. Several listeners may be registered on one key; each gets every event.
  // Listener calls: on a background thread (never one doing network I/O), in store order for
  // each key, never two at once for one registration; a slow listener does not hold up the
  // others; an exception thrown by a listener is caught and logged. A listener may call Watch,
  // RemoveWatch, RemoveDataListener and Close.
  // Errors: InvalidArgument for a malformed key; FailedPrecondition after Close(); Unavailable
  // if the subtree could not be read; Unimplemented if the repository cannot watch.
  virtual absl::StatusOr<WatchId> Watch(absl::string_view key, DataChangedListener listener,
                                        const DataListenerOptions& options) {
    return absl::UnimplementedError(
        absl::StrCat("Watch '", key, "': this repository does not support watches"));
  }
  absl::StatusOr<WatchId> Watch(absl::string_view key, DataChangedListener listener) {
    return Watch(key, std::move(listener), DataListenerOptions{});
  }

  // Removes the one registration `id`. When it returns its listener is not running and will not
  // be called again — except when called from inside that listener, which finishes its call.
  // No-op for an unknown or already removed id.
  virtual void RemoveWatch(WatchId id) {}

  // Removes every registration on exactly `key` (not those of keys above or below it), with the
  // guarantees of RemoveWatch. No-op when there is none.
  virtual void RemoveDataListener(absl::string_view key) {}

  // Destroys the instance session (ephemeral keys vanish at once, deleted first so that they
  // carry no lock-delay: another instance may claim them right away), stops every background
  // thread and fails later calls with FailedPrecondition. Safe to call twice; never blocks for
  // longer than the request timeout. Watches stop at once: no data listener is called after it
  // returns (called from inside a data listener, that listener's current call finishes).
  // Requests in flight and lock waiters (also one inside a data listener) are failed first,
  // with FailedPrecondition, so Close never waits for a listener that waits for a lock.
  virtual absl::Status Close() = 0;
};

}  // namespace registry

#endif  // REGISTRY_REPOSITORY_H_
