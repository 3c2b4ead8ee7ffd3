// SPDX-License-Identifier: Apache-2.0
// watch/diff.h
//
// The pure heart of a watch: what it covers (WatchScope), what its listener has been told
// (Snapshot), and the diff that turns a fresh listing of the store into the events that bring
// the listener from its view to the store's. No I/O, no threads.
//
// Thread safety: plain values and pure functions.
#ifndef WATCH_DIFF_H_
#define WATCH_DIFF_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "consul/kv.h"
#include "registry/events.h"

namespace registry::watch {

// Maps a Consul key to the key events carry, or nullopt to ignore that Consul key (for a
// repository: KeySpace::RepositoryKey, which strips the namespace). A null mapper keeps keys as
// they are.
using KeyMapper = std::function<std::optional<std::string>(absl::string_view consul_key)>;

// The keys one watch covers. A watch on "ns/a" covers "ns/a" itself and every key below
// "ns/a/", never "ns/ab". A key that is empty or ends with '/' ("ns/") is a pure prefix: it
// covers every key starting with it.
class WatchScope {
 public:
  explicit WatchScope(std::string consul_key);
  // Every key starting with `prefix`, whatever follows ("ns/a" covers "ns/ab" too).
  static WatchScope Prefix(std::string prefix);
  // The single key `key`.
  static WatchScope Key(std::string key);

  // The key given at construction; also the prefix of the recursive listing that covers the
  // scope (a superset: "ns/a" lists "ns/ab" too, which Contains() rejects).
  const std::string& consul_key() const { return consul_key_; }
  // The prefix of every key of the scope below consul_key(): consul_key() + "/", or consul_key()
  // for a pure prefix.
  const std::string& tree_prefix() const { return tree_prefix_; }

  // True iff `key` is inside the scope.
  bool Contains(absl::string_view key) const;

 private:
  WatchScope(std::string consul_key, std::string tree_prefix, bool single_key);

  std::string consul_key_;
  std::string tree_prefix_;  // consul_key_ + "/", or consul_key_ for a pure prefix
  bool single_key_ = false;  // Key(): nothing below consul_key_
};

// One key as the listener last saw it.
struct KnownEntry {
  std::string consul_key;
  std::string key;  // as mapped for events
  std::string value;
  uint64_t flags = 0;
  uint64_t modify_index = 0;

  friend bool operator==(const KnownEntry&, const KnownEntry&) = default;
};

// The listener's view: entries sorted by consul_key, without duplicates.
using Snapshot = std::vector<KnownEntry>;

// How a present key is judged changed.
enum class CompareBy {
  // Normal operation: changed when its ModifyIndex differs. Consul bumps a key's ModifyIndex on
  // every write that changes its value, flags or session, and on no other (a rewrite of identical
  // content leaves it alone), so within one server history the index alone decides; every
  // ModifyIndex change of a present key is an UPDATED. A listing in which a known key's index is
  // lower than the one known spans two histories (the store's indexes were reset, say a snapshot
  // restored, and no blocking query saw the index go back): it is compared by content instead,
  // since a key rewritten since then may carry its old index with a new value.
  kModifyIndex,
  // After the store's index went backwards (or any re-list after an error) indexes are no longer
  // comparable: changed only when its value or flags differ.
  kContent,
};

struct DiffResult {
  Snapshot next;                         // the listener's view once `events` are delivered
  std::vector<DataChangedEvent> events;  // sorted by consul key; at most one per key
};

// Compares `listing` (entries of a recursive listing of scope.consul_key(), in any order) with
// `previous`. Entries outside `scope` or ignored by `mapper` are dropped. Emits kAdded for keys
// absent from `previous`, kUpdated for present keys judged changed by `compare`, and kDeleted
// (with the last known value and flags) for keys of `previous` missing from the listing.
DiffResult DiffListing(Snapshot previous, std::vector<consul::DirEntry> listing,
                       const WatchScope& scope, const KeyMapper& mapper, CompareBy compare);

// DiffListing straight from the body of a recursive listing, which is what every watch answer
// is: entries the listener already has (most of a big listing) are compared in place and never
// copied (nor, compared by index, decoded). Returns nullopt, with `*previous` untouched, when the
// body is not a listing consul::ForEachListingEntry (consul/kv_listing_decoder.h) reads, a value
// it decodes is not base64, or the keys are not in strictly ascending byte order (Consul lists
// them sorted; anything else is left to the general parser and DiffListing). On success
// `*previous` is consumed and the result equals DiffListing's.
std::optional<DiffResult> DiffListingBody(Snapshot* previous, absl::string_view body,
                                          const WatchScope& scope, const KeyMapper& mapper,
                                          CompareBy compare);

// One kAdded per entry of `snapshot`, in order (the replay of the existing state).
std::vector<DataChangedEvent> ReplayEvents(const Snapshot& snapshot);

}  // namespace registry::watch

#endif  // WATCH_DIFF_H_
