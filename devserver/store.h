// SPDX-License-Identifier: Apache-2.0
// devserver/store.h
//
// Store is the dev server's whole state: the KV table with its tombstones, sessions with their
// TTL timers and lock-delays, the raft-like index counters, and the watches that blocking
// queries wait on. It implements Consul's state-store rules (docs/consul-behaviour.md): one
// global index bumped by every effective write, per-key ModifyIndex, prefix indexes raised by
// tombstones, identical writes that change nothing, acquire/release with LockIndex,
// lock-delay after invalidation, TTL expiry at 2×TTL, atomic transactions.
//
// It knows nothing about HTTP or sockets; the HTTP layer (api.h) and tests drive it directly.
// Time comes from Options::clock so tests can run TTL and lock-delay rules on a fake clock;
// nothing here expires on its own: whoever owns the store calls Tick() at the deadline it
// returns (the HTTP server does so on its IO thread).
//
// Thread safety: every method may be called concurrently from any thread; one internal mutex
// serialises them. Watch callbacks and the deadline listener are invoked without that mutex
// held, on the thread that made the change, and may call back into the store.
#ifndef DEVSERVER_STORE_H_
#define DEVSERVER_STORE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "devserver/store_types.h"

namespace registry::devserver {

class Store {
 public:
  struct Options {
    std::string node_name = "dev";                       // the only registered node
    absl::Duration session_ttl_min = absl::Seconds(10);  // Consul's session_ttl_min
    absl::Duration tombstone_ttl = absl::Minutes(15);    // tombstones are reaped after this
    std::function<absl::Time()> clock;                   // defaults to absl::Now
  };

  // Every read reports the index Consul would put in X-Consul-Index (possibly 0; the HTTP
  // layer raises it to 1) and the store version it was taken at, for Watch().
  struct KeyRead {
    std::optional<DirEntry> entry;
    uint64_t index = 0;
    uint64_t version = 0;
  };
  struct ListRead {
    std::vector<DirEntry> entries;  // sorted by key
    uint64_t index = 0;
    uint64_t version = 0;
  };
  struct ListSummary {
    size_t count = 0;  // entries visited
    uint64_t index = 0;
    uint64_t version = 0;
  };
  struct KeysRead {
    std::vector<std::string> keys;  // sorted, de-duplicated when a separator is used
    uint64_t index = 0;
    uint64_t version = 0;
  };
  struct SessionsRead {
    std::vector<SessionEntry> sessions;  // sorted by id
    uint64_t index = 0;
    uint64_t version = 0;
  };

  using WatchId = uint64_t;

  static constexpr absl::Duration kMaxLockDelay = absl::Seconds(60);
  static constexpr absl::Duration kMaxSessionTtl = absl::Hours(24);

  explicit Store(Options options);
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // --- KV reads ---------------------------------------------------------------------------

  // Returns `key`'s entry with index = its ModifyIndex, or no entry with index = the KV
  // table's index (live keys and tombstones).
  KeyRead Get(absl::string_view key) const;

  // Returns every entry whose key starts with `prefix`. The index is the highest ModifyIndex
  // or tombstone index under a non-empty prefix, else the whole table's index.
  ListRead List(absl::string_view prefix) const;

  // Like List, but hands each entry to `visit`, in key order, instead of copying it: a listing
  // of 10,000 keys answers every wake-up of a watch on their prefix. `visit` runs under the
  // store's reader lock, so it must not call the store.
  ListSummary VisitList(absl::string_view prefix,
                        absl::FunctionRef<void(const DirEntry&)> visit) const;

  // Like List, but only keys; with a non-empty `separator`, each key is cut after the first
  // separator following the prefix (the separator is kept) and duplicates are dropped.
  KeysRead Keys(absl::string_view prefix, absl::string_view separator) const;

  // --- KV writes --------------------------------------------------------------------------

  // Applies one operation with /v1/kv semantics and returns its boolean answer: true for set,
  // delete and delete-tree; the outcome for cas, lock, unlock and delete-cas. A lock refused
  // by an active lock-delay is false. Errors (FailedPrecondition, Consul's words):
  // "Must provide key", "missing session", `invalid session "<id>"`.
  absl::StatusOr<bool> Apply(const KvOp& op);

  // Runs `ops` atomically, as /v1/txn: every op is evaluated (later ops see earlier writes);
  // if any fails, nothing is kept and every failure is reported with its op index and
  // Consul's message; otherwise all writes share one new index. Results follow Consul:
  // reads return entries with values, writes and checks return entries without values.
  TxnOutcome Txn(const std::vector<KvOp>& ops);

  // --- Sessions ---------------------------------------------------------------------------

  // Validates and creates a session, returning its new UUID. Errors are FailedPrecondition
  // with Consul's messages ("Must provide Node", "Invalid Behavior setting 'x'",
  // "Invalid Session TTL '...', must be between [...]", "Missing node registration",
  // "Missing check 'x' registration"). A TTL session expires 2×TTL after creation or the
  // last renewal.
  absl::StatusOr<std::string> CreateSession(const SessionCreateRequest& request);

  // Destroys session `id` and invalidates it: keys it holds are released (behavior release;
  // ModifyIndex bumped, value and LockIndex kept) or deleted (behavior delete), and each gets
  // a lock-delay of min(LockDelay, 60s). Returns false (and changes nothing) if `id` is not
  // a live session.
  bool DestroySession(absl::string_view id);

  // Same invalidation as DestroySession, standing for a TTL expiry that happens right now
  // (fault injection). Returns false if `id` is not a live session.
  bool ExpireSession(absl::string_view id);

  // Registers `node` in the catalog (an external node: no checks), so that sessions may name
  // it. Idempotent; touches no index the KV and session endpoints report.
  void RegisterNode(absl::string_view node);

  // Restarts `id`'s TTL timer (2×TTL from now) without touching any index. Returns the
  // session, or nullopt if it does not exist.
  std::optional<SessionEntry> RenewSession(absl::string_view id);

  // Reads; the index is the sessions table index.
  SessionsRead GetSession(absl::string_view id) const;
  SessionsRead ListSessions() const;
  SessionsRead NodeSessions(absl::string_view node) const;

  // --- Timers -----------------------------------------------------------------------------

  // Expires every TTL session whose deadline has passed (each invalidation is its own write
  // with its own index) and reaps tombstones older than Options::tombstone_ttl (prefix
  // indexes may then go backwards, as in Consul). Returns the next time Tick() has work, or
  // absl::InfiniteFuture().
  absl::Time Tick();

  // Installs `listener`, called with a deadline whenever a change makes Tick() due earlier
  // than the deadline last returned or announced. nullptr removes it. A change racing with
  // this call may still invoke a copy of the previous listener, so listeners must stay safe
  // to call after their owner detaches (the HTTP server routes them through a handle it
  // disarms on Stop).
  void SetDeadlineListener(std::function<void(absl::Time)> listener);

  // --- Watches ----------------------------------------------------------------------------

  // Registers `on_change` to run once, after the next change that touches `scope` (a key's
  // entry or tombstone, anything under a prefix, any session). If the store has changed since
  // `observed_version` (the version of the read being waited on), nothing is registered and
  // nullopt is returned: the caller must re-read, as the change may already be missed.
  std::optional<WatchId> Watch(const WatchScope& scope, uint64_t observed_version,
                               std::function<void()> on_change);

  // Removes a watch that has not fired yet; unknown or fired ids are ignored.
  void CancelWatch(WatchId id);

  // Number of registered watches (for tests and benchmarks).
  size_t watch_count() const;
  // How many watches writes have fired since the start or the last reset: the blocking queries
  // they woke (for benchmarks of how many waiters one release wakes).
  uint64_t woken_watch_count() const;
  void ResetWokenWatchCount();

  // --- Snapshot-restore emulation (fault injection) ---------------------------------------

  // Moves every index back to `base` (>= 1) as restoring an older snapshot would: data and
  // sessions stay but their Create/ModifyIndex become `base`, tombstones are dropped, the
  // next write gets `base` + 1. Every watch fires and epoch() increases, so blocked queries
  // return at once with the lower index.
  void ResetIndex(uint64_t base);

  // Incremented by ResetIndex; a blocking query whose epoch changed must return at once.
  uint64_t epoch() const;

  // The last index handed out (the raft index).
  uint64_t last_index() const;

  // The time until which `key` refuses acquisitions, or absl::InfinitePast() if none.
  absl::Time LockDelayExpiry(absl::string_view key) const;

 private:
  struct Tombstone {
    uint64_t index = 0;
    absl::Time deleted_at;
  };
  struct SessionState {
    SessionEntry entry;
    absl::Duration ttl = absl::ZeroDuration();
    absl::Time expires = absl::InfiniteFuture();
  };
  // One write in progress: its index, what it touched, and how to undo its KV changes.
  struct Mutation {
    uint64_t index = 0;
    absl::Time now;
    std::vector<std::string> changed_keys;
    bool kvs_changed = false;
    bool tombstones_changed = false;
    bool sessions_changed = false;
    struct Undo {
      std::string key;
      std::optional<DirEntry> entry;
      std::optional<Tombstone> tombstone;
    };
    std::vector<Undo> undo;
  };
  struct OpResult {
    bool ok = true;
    std::string failure;  // Consul's txn message when !ok
    std::vector<DirEntry> entries;
  };
  struct WatchEntry {
    WatchScope scope;
    std::function<void()> callback;
  };
  using Callbacks = std::vector<std::function<void()>>;

  Mutation BeginLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<OpResult> ExecuteLocked(const KvOp& op, Mutation* m)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Consul's kvsSetTxn: keeps CreateIndex (and Session unless `update_session`), skips the
  // write when nothing changes. Returns the entry as stored.
  DirEntry SetLocked(DirEntry entry, bool update_session, Mutation* m)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deletes `key` leaving a tombstone; false if it did not exist.
  bool DeleteLocked(absl::string_view key, Mutation* m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteTreeLocked(absl::string_view prefix, Mutation* m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PutTombstoneLocked(const std::string& key, Mutation* m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Saves `key`'s entry and tombstone so RollbackLocked can restore them.
  void RecordUndoLocked(const std::string& key, Mutation* m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Replaces `key`'s entry (nullopt erases it), keeping the session -> keys index in sync.
  void ReplaceEntryLocked(const std::string& key, std::optional<DirEntry> entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RollbackLocked(Mutation* m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CommitLocked(const Mutation& m, Callbacks* fired) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InvalidateSessionLocked(const std::string& id, Mutation* m)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool InvalidateAndCommit(absl::string_view id);
  ListSummary VisitListLocked(absl::string_view prefix,
                              absl::FunctionRef<void(const DirEntry&)> visit) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  uint64_t KvsTableIndexLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Records that Tick() is due at `deadline`; returns the listener to call (outside the
  // lock) if that is earlier than anything announced so far.
  std::function<void(absl::Time)> AnnounceDeadlineLocked(absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes watch `id` (its callback into `fired` unless null); false if it was not registered.
  bool TakeWatchLocked(WatchId id, Callbacks* fired) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string NewUuidLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;

  mutable absl::Mutex mu_;
  absl::btree_map<std::string, DirEntry> kvs_ ABSL_GUARDED_BY(mu_);
  absl::btree_map<std::string, Tombstone> tombstones_ ABSL_GUARDED_BY(mu_);
  // session id -> keys it holds; mirrors DirEntry::session.
  absl::flat_hash_map<std::string, absl::btree_set<std::string>> held_keys_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::Time> lock_delays_ ABSL_GUARDED_BY(mu_);
  absl::btree_map<std::string, SessionState> sessions_ ABSL_GUARDED_BY(mu_);
  // Nodes registered through the catalog, besides options_.node_name.
  absl::btree_set<std::string> external_nodes_ ABSL_GUARDED_BY(mu_);

  uint64_t index_ ABSL_GUARDED_BY(mu_) = 1;  // index 1 stands for the node's registration
  uint64_t kvs_index_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t tombstones_index_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sessions_index_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;  // bumped by every committed change
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;

  absl::flat_hash_map<WatchId, WatchEntry> watches_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::flat_hash_set<WatchId>> key_watches_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::flat_hash_set<WatchId>> prefix_watches_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<WatchId> session_watches_ ABSL_GUARDED_BY(mu_);
  WatchId next_watch_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t woken_watches_ ABSL_GUARDED_BY(mu_) = 0;

  std::function<void(absl::Time)> deadline_listener_ ABSL_GUARDED_BY(mu_);
  absl::Time announced_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  absl::BitGen rng_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::devserver

#endif  // DEVSERVER_STORE_H_
