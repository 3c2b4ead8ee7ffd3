// SPDX-License-Identifier: Apache-2.0
// Store: KV reads, the write primitives shared by every write path, commit and watches,
// timers and the index reset. Sessions are in store_session.cc, KV operations and
// transactions in store_txn.cc.
#include "devserver/store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"

namespace registry::devserver {

Store::Store(Options options) : options_(std::move(options)) {}

// --- Reads ---------------------------------------------------------------------------------

uint64_t Store::KvsTableIndexLocked() const { return std::max(kvs_index_, tombstones_index_); }

Store::KeyRead Store::Get(absl::string_view key) const {
  absl::ReaderMutexLock lock(&mu_);
  KeyRead read;
  read.version = version_;
  auto it = kvs_.find(key);
  if (it == kvs_.end()) {
    read.index = KvsTableIndexLocked();
  } else {
    read.entry = it->second;
    read.index = it->second.modify_index;
  }
  return read;
}

Store::ListSummary Store::VisitListLocked(absl::string_view prefix,
                                          absl::FunctionRef<void(const DirEntry&)> visit) const {
  ListSummary summary;
  summary.version = version_;
  uint64_t prefix_index = 0;
  for (auto it = kvs_.lower_bound(prefix); it != kvs_.end() && absl::StartsWith(it->first, prefix);
       ++it) {
    visit(it->second);
    ++summary.count;
    prefix_index = std::max(prefix_index, it->second.modify_index);
  }
  // Consul's kvsListTxn: tombstones under a non-empty prefix count; an empty prefix uses the
  // table index; a prefix with neither entries nor tombstones falls back to the table index.
  if (!prefix.empty()) {
    for (auto it = tombstones_.lower_bound(prefix);
         it != tombstones_.end() && absl::StartsWith(it->first, prefix); ++it) {
      prefix_index = std::max(prefix_index, it->second.index);
    }
  } else {
    prefix_index = KvsTableIndexLocked();
  }
  summary.index = prefix_index != 0 ? prefix_index : KvsTableIndexLocked();
  return summary;
}

Store::ListSummary Store::VisitList(absl::string_view prefix,
                                    absl::FunctionRef<void(const DirEntry&)> visit) const {
  absl::ReaderMutexLock lock(&mu_);
  return VisitListLocked(prefix, visit);
}

Store::ListRead Store::List(absl::string_view prefix) const {
  ListRead read;
  const ListSummary summary =
      VisitList(prefix, [&read](const DirEntry& entry) { read.entries.push_back(entry); });
  read.index = summary.index;
  read.version = summary.version;
  return read;
}

Store::KeysRead Store::Keys(absl::string_view prefix, absl::string_view separator) const {
  KeysRead read;
  // Keys are visited in order, so the keys of one folder are consecutive (as in Consul's
  // kvsListKeysTxn, which compares each cut key with the previous one).
  const ListSummary summary = VisitList(prefix, [&](const DirEntry& entry) {
    absl::string_view key = entry.key;
    if (!separator.empty()) {
      const size_t cut = key.find(separator, prefix.size());
      if (cut != absl::string_view::npos) key = key.substr(0, cut + separator.size());
    }
    if (read.keys.empty() || read.keys.back() != key) read.keys.emplace_back(key);
  });
  read.index = summary.index;
  read.version = summary.version;
  return read;
}

absl::Time Store::LockDelayExpiry(absl::string_view key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = lock_delays_.find(key);
  return it == lock_delays_.end() ? absl::InfinitePast() : it->second;
}

uint64_t Store::epoch() const {
  absl::ReaderMutexLock lock(&mu_);
  return epoch_;
}

uint64_t Store::last_index() const {
  absl::ReaderMutexLock lock(&mu_);
  return index_;
}

// --- Write primitives ----------------------------------------------------------------------

Store::Mutation Store::BeginLocked() {
  Mutation m;
  m.index = index_ + 1;
  m.now = options_.clock ? options_.clock() : absl::Now();
  return m;
}

void Store::ReplaceEntryLocked(const std::string& key, std::optional<DirEntry> entry) {
  auto it = kvs_.find(key);
  if (it != kvs_.end() && !it->second.session.empty()) {
    auto held = held_keys_.find(it->second.session);
    if (held != held_keys_.end()) {
      held->second.erase(key);
      if (held->second.empty()) held_keys_.erase(held);
    }
  }
  if (!entry.has_value()) {
    if (it != kvs_.end()) kvs_.erase(it);
    return;
  }
  if (!entry->session.empty()) held_keys_[entry->session].insert(key);
  kvs_[key] = *std::move(entry);
}

DirEntry Store::SetLocked(DirEntry entry, bool update_session, Mutation* m) {
  auto it = kvs_.find(entry.key);
  const DirEntry* existing = it == kvs_.end() ? nullptr : &it->second;
  entry.create_index = existing != nullptr ? existing->create_index : m->index;
  if (!update_session) entry.session = existing != nullptr ? existing->session : "";
  if (existing != nullptr && existing->SameContent(entry)) {
    entry.modify_index = existing->modify_index;  // Consul 1.6+: identical writes are no-ops
    return entry;
  }
  entry.modify_index = m->index;
  RecordUndoLocked(entry.key, m);
  m->changed_keys.push_back(entry.key);
  m->kvs_changed = true;
  ReplaceEntryLocked(entry.key, entry);
  return entry;
}

void Store::RecordUndoLocked(const std::string& key, Mutation* m) {
  Mutation::Undo undo{key, std::nullopt, std::nullopt};
  auto entry = kvs_.find(key);
  if (entry != kvs_.end()) undo.entry = entry->second;
  auto tomb = tombstones_.find(key);
  if (tomb != tombstones_.end()) undo.tombstone = tomb->second;
  m->undo.push_back(std::move(undo));
}

void Store::PutTombstoneLocked(const std::string& key, Mutation* m) {
  tombstones_[key] = Tombstone{m->index, m->now};
  m->tombstones_changed = true;
}

bool Store::DeleteLocked(absl::string_view key, Mutation* m) {
  auto it = kvs_.find(key);
  if (it == kvs_.end()) return false;
  std::string owned(key);
  RecordUndoLocked(owned, m);
  ReplaceEntryLocked(owned, std::nullopt);
  PutTombstoneLocked(owned, m);
  m->changed_keys.push_back(std::move(owned));
  m->kvs_changed = true;
  return true;
}

void Store::DeleteTreeLocked(absl::string_view prefix, Mutation* m) {
  // Consul deletes the subtree and leaves one tombstone, keyed by the prefix itself (none when
  // the prefix is empty: the table index then covers every key).
  std::vector<std::string> doomed;
  for (auto it = kvs_.lower_bound(prefix); it != kvs_.end() && absl::StartsWith(it->first, prefix);
       ++it) {
    doomed.push_back(it->first);
  }
  if (doomed.empty()) return;
  std::string owned(prefix);
  if (!owned.empty()) RecordUndoLocked(owned, m);
  for (std::string& key : doomed) {
    RecordUndoLocked(key, m);  // a duplicate of `owned` is harmless: the first record wins
    ReplaceEntryLocked(key, std::nullopt);
    m->changed_keys.push_back(std::move(key));
  }
  if (!owned.empty()) PutTombstoneLocked(owned, m);
  m->kvs_changed = true;
}

void Store::RollbackLocked(Mutation* m) {
  // Replayed newest first, so a key recorded twice ends in its oldest recorded state.
  for (auto it = m->undo.rbegin(); it != m->undo.rend(); ++it) {
    ReplaceEntryLocked(it->key, it->entry);
    if (it->tombstone.has_value()) {
      tombstones_[it->key] = *it->tombstone;
    } else {
      tombstones_.erase(it->key);
    }
  }
  *m = Mutation{};
}

// --- Commit and watches --------------------------------------------------------------------

bool Store::TakeWatchLocked(WatchId id, Callbacks* fired) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return false;
  const WatchScope& scope = it->second.scope;
  switch (scope.kind) {
    case WatchScope::Kind::kKey:
    case WatchScope::Kind::kPrefix: {
      auto& index = scope.kind == WatchScope::Kind::kKey ? key_watches_ : prefix_watches_;
      auto bucket = index.find(scope.target);
      if (bucket != index.end()) {
        bucket->second.erase(id);
        if (bucket->second.empty()) index.erase(bucket);
      }
      break;
    }
    case WatchScope::Kind::kSessions:
      session_watches_.erase(id);
      break;
  }
  if (fired != nullptr) fired->push_back(std::move(it->second.callback));
  watches_.erase(it);
  return true;
}

void Store::CommitLocked(const Mutation& m, Callbacks* fired) {
  if (!m.kvs_changed && !m.tombstones_changed && !m.sessions_changed) return;
  index_ = m.index;
  if (m.kvs_changed) kvs_index_ = m.index;
  if (m.tombstones_changed) tombstones_index_ = m.index;
  if (m.sessions_changed) sessions_index_ = m.index;
  ++version_;

  std::vector<WatchId> due;
  for (const std::string& key : m.changed_keys) {
    auto exact = key_watches_.find(key);
    if (exact != key_watches_.end())
      due.insert(due.end(), exact->second.begin(), exact->second.end());
    if (prefix_watches_.empty()) continue;
    for (size_t length = 0; length <= key.size(); ++length) {
      auto bucket = prefix_watches_.find(absl::string_view(key).substr(0, length));
      if (bucket != prefix_watches_.end()) {
        due.insert(due.end(), bucket->second.begin(), bucket->second.end());
      }
    }
  }
  if (m.sessions_changed) due.insert(due.end(), session_watches_.begin(), session_watches_.end());
  for (WatchId id : due) {
    if (TakeWatchLocked(id, fired)) ++woken_watches_;  // ids already taken are ignored
  }
}

std::optional<Store::WatchId> Store::Watch(const WatchScope& scope, uint64_t observed_version,
                                           std::function<void()> on_change) {
  absl::MutexLock lock(&mu_);
  if (version_ != observed_version) return std::nullopt;
  const WatchId id = next_watch_id_++;
  switch (scope.kind) {
    case WatchScope::Kind::kKey:
      key_watches_[scope.target].insert(id);
      break;
    case WatchScope::Kind::kPrefix:
      prefix_watches_[scope.target].insert(id);
      break;
    case WatchScope::Kind::kSessions:
      session_watches_.insert(id);
      break;
  }
  watches_.emplace(id, WatchEntry{scope, std::move(on_change)});
  return id;
}

void Store::CancelWatch(WatchId id) {
  absl::MutexLock lock(&mu_);
  TakeWatchLocked(id, nullptr);
}

size_t Store::watch_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return watches_.size();
}

uint64_t Store::woken_watch_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return woken_watches_;
}

void Store::ResetWokenWatchCount() {
  absl::MutexLock lock(&mu_);
  woken_watches_ = 0;
}

// --- Timers --------------------------------------------------------------------------------

void Store::SetDeadlineListener(std::function<void(absl::Time)> listener) {
  absl::MutexLock lock(&mu_);
  deadline_listener_ = std::move(listener);
}

std::function<void(absl::Time)> Store::AnnounceDeadlineLocked(absl::Time deadline) {
  if (deadline >= announced_deadline_) return nullptr;
  announced_deadline_ = deadline;
  return deadline_listener_;
}

absl::Time Store::Tick() {
  Callbacks fired;
  absl::Time next = absl::InfiniteFuture();
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = options_.clock ? options_.clock() : absl::Now();
    std::vector<std::string> expired;
    for (const auto& [id, state] : sessions_) {
      if (state.expires <= now) expired.push_back(id);
    }
    for (const std::string& id : expired) {
      Mutation m = BeginLocked();
      InvalidateSessionLocked(id, &m);
      CommitLocked(m, &fired);
    }
    // Reaping is a write of its own in Consul too; it moves the tombstone table index on but
    // wakes nobody (no key changed).
    Mutation reap = BeginLocked();
    for (auto it = tombstones_.begin(); it != tombstones_.end();) {
      if (it->second.deleted_at + options_.tombstone_ttl <= now) {
        it = tombstones_.erase(it);
        reap.tombstones_changed = true;
      } else {
        next = std::min(next, it->second.deleted_at + options_.tombstone_ttl);
        ++it;
      }
    }
    CommitLocked(reap, &fired);
    for (auto it = lock_delays_.begin(); it != lock_delays_.end();) {
      auto current = it++;
      if (current->second <= now) lock_delays_.erase(current);
    }
    for (const auto& [id, state] : sessions_) next = std::min(next, state.expires);
    announced_deadline_ = next;
  }
  for (auto& callback : fired) callback();
  return next;
}

// --- Index reset ---------------------------------------------------------------------------

void Store::ResetIndex(uint64_t base) {
  base = std::max<uint64_t>(base, 1);
  Callbacks fired;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, entry] : kvs_) {
      entry.create_index = base;
      entry.modify_index = base;
    }
    for (auto& [id, state] : sessions_) {
      state.entry.create_index = base;
      state.entry.modify_index = base;
    }
    tombstones_.clear();
    index_ = base;
    kvs_index_ = kvs_.empty() ? 0 : base;
    tombstones_index_ = 0;
    sessions_index_ = sessions_.empty() ? 0 : base;
    ++version_;
    ++epoch_;
    std::vector<WatchId> all;
    all.reserve(watches_.size());
    for (const auto& [id, watch] : watches_) all.push_back(id);
    for (WatchId id : all) TakeWatchLocked(id, &fired);
  }
  for (auto& callback : fired) callback();
}

}  // namespace registry::devserver
