// SPDX-License-Identifier: Apache-2.0
#include "watch/diff.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "consul/kv_listing_decoder.h"

namespace registry::watch {
namespace {

DataChangedEvent MakeEvent(DataChangedEvent::Type type, const KnownEntry& entry) {
  DataChangedEvent event;
  event.type = type;
  event.key = entry.key;
  event.value = entry.value;
  event.flags = entry.flags;
  return event;
}

bool Changed(const KnownEntry& known, const consul::DirEntry& now, CompareBy compare) {
  if (compare == CompareBy::kModifyIndex) return known.modify_index != now.modify_index;
  return known.flags != now.flags || known.value != now.value;
}

KnownEntry Known(consul::DirEntry&& entry, std::string key) {
  return KnownEntry{std::move(entry.key), std::move(key), std::move(entry.value), entry.flags,
                    entry.modify_index};
}

}  // namespace

WatchScope::WatchScope(std::string consul_key) : consul_key_(std::move(consul_key)) {
  tree_prefix_ = consul_key_;
  if (!consul_key_.empty() && consul_key_.back() != '/') tree_prefix_.push_back('/');
}

WatchScope::WatchScope(std::string consul_key, std::string tree_prefix, bool single_key)
    : consul_key_(std::move(consul_key)),
      tree_prefix_(std::move(tree_prefix)),
      single_key_(single_key) {}

WatchScope WatchScope::Prefix(std::string prefix) {
  std::string tree_prefix = prefix;
  return WatchScope(std::move(prefix), std::move(tree_prefix), /*single_key=*/false);
}

WatchScope WatchScope::Key(std::string key) {
  return WatchScope(std::move(key), "", /*single_key=*/true);
}

bool WatchScope::Contains(absl::string_view key) const {
  return key == consul_key_ || (!single_key_ && absl::StartsWith(key, tree_prefix_));
}

namespace {

// True if a key of `listing` (sorted by key) has a lower ModifyIndex than `previous` knows.
bool IndexWentBack(const Snapshot& previous, const std::vector<consul::DirEntry>& listing) {
  auto known = previous.begin();
  for (const consul::DirEntry& entry : listing) {
    while (known != previous.end() && known->consul_key < entry.key) ++known;
    if (known != previous.end() && known->consul_key == entry.key &&
        entry.modify_index < known->modify_index) {
      return true;
    }
  }
  return false;
}

}  // namespace

DiffResult DiffListing(Snapshot previous, std::vector<consul::DirEntry> listing,
                       const WatchScope& scope, const KeyMapper& mapper, CompareBy compare) {
  listing.erase(
      std::remove_if(listing.begin(), listing.end(),
                     [&scope](const consul::DirEntry& e) { return !scope.Contains(e.key); }),
      listing.end());
  auto by_key = [](const consul::DirEntry& a, const consul::DirEntry& b) { return a.key < b.key; };
  if (!std::is_sorted(listing.begin(), listing.end(), by_key)) {
    std::stable_sort(listing.begin(), listing.end(), by_key);
  }
  if (compare == CompareBy::kModifyIndex && IndexWentBack(previous, listing)) {
    compare = CompareBy::kContent;
  }

  DiffResult result;
  result.next.reserve(listing.size());
  auto old_it = previous.begin();
  auto emit_deleted = [&result](const KnownEntry& gone) {
    result.events.push_back(MakeEvent(DataChangedEvent::Type::kDeleted, gone));
  };
  for (size_t i = 0; i < listing.size(); ++i) {
    // A listing never repeats a key; if one did, the last occurrence wins.
    if (i + 1 < listing.size() && listing[i + 1].key == listing[i].key) continue;
    consul::DirEntry& entry = listing[i];
    while (old_it != previous.end() && old_it->consul_key < entry.key) emit_deleted(*old_it++);
    if (old_it != previous.end() && old_it->consul_key == entry.key) {
      KnownEntry& known = *old_it++;
      if (Changed(known, entry, compare)) {
        result.next.push_back(Known(std::move(entry), std::move(known.key)));
        result.events.push_back(MakeEvent(DataChangedEvent::Type::kUpdated, result.next.back()));
      } else {
        // Unchanged for the listener; keep the newest index so the next comparison is exact.
        known.modify_index = entry.modify_index;
        result.next.push_back(std::move(known));
      }
      continue;
    }
    std::optional<std::string> key =
        mapper ? mapper(entry.key) : std::optional<std::string>(entry.key);
    if (!key.has_value()) continue;
    result.next.push_back(Known(std::move(entry), std::move(*key)));
    result.events.push_back(MakeEvent(DataChangedEvent::Type::kAdded, result.next.back()));
  }
  while (old_it != previous.end()) emit_deleted(*old_it++);
  return result;
}

namespace {

// What becomes of one key, in key order (phase one of DiffListingBody).
struct Step {
  enum class Kind : uint8_t { kKeep, kUpdate, kAdd, kDelete };
  Kind kind;
  size_t previous = 0;        // index into the previous snapshot (kKeep, kUpdate, kDelete)
  size_t fresh = 0;           // index into the fresh entries (kUpdate, kAdd)
  uint64_t modify_index = 0;  // the key's current index (kKeep)
};

}  // namespace

std::optional<DiffResult> DiffListingBody(Snapshot* previous, absl::string_view body,
                                          const WatchScope& scope, const KeyMapper& mapper,
                                          CompareBy compare) {
  // Phase one reads the body and only looks at `previous`, so a body refused half-way leaves
  // it as it was. Only changed and new keys are copied (into `fresh`).
  const Snapshot& known = *previous;
  std::vector<Step> steps;
  steps.reserve(known.size() + 8);
  std::vector<KnownEntry> fresh;
  std::string value;     // the decoded value of the entry being read
  std::string last_key;  // to check the order
  bool first = true;
  bool went_back = false;  // a known key's index is lower: compare by content (CompareBy)
  size_t old = 0;
  const bool read = consul::ForEachListingEntry(body, [&](const consul::ListingEntryView& entry) {
    if (!first && entry.key <= last_key) return false;
    first = false;
    last_key.assign(entry.key.data(), entry.key.size());
    if (!scope.Contains(entry.key)) return true;
    while (old < known.size() && known[old].consul_key < entry.key) {
      steps.push_back({Step::Kind::kDelete, old++});
    }
    if (old < known.size() && known[old].consul_key == entry.key) {
      const KnownEntry& was = known[old];
      if (compare == CompareBy::kModifyIndex && entry.modify_index < was.modify_index) {
        went_back = true;
        return false;
      }
      // By index, an unchanged key (most of a big listing) needs no decoding at all.
      bool changed = was.modify_index != entry.modify_index;
      if (changed || compare == CompareBy::kContent) {
        if (!absl::Base64Unescape(entry.value_base64, &value)) return false;
      }
      if (compare == CompareBy::kContent) {
        changed = was.flags != entry.flags || was.value != value;
      }
      if (changed) {
        fresh.push_back(
            KnownEntry{std::string(entry.key), "", value, entry.flags, entry.modify_index});
        steps.push_back({Step::Kind::kUpdate, old, fresh.size() - 1});
      } else {
        steps.push_back({Step::Kind::kKeep, old, 0, entry.modify_index});
      }
      ++old;
      return true;
    }
    std::optional<std::string> key =
        mapper ? mapper(entry.key) : std::optional<std::string>(std::string(entry.key));
    if (!key.has_value()) return true;
    if (!absl::Base64Unescape(entry.value_base64, &value)) return false;
    fresh.push_back(KnownEntry{std::string(entry.key), std::move(*key), value, entry.flags,
                               entry.modify_index});
    steps.push_back({Step::Kind::kAdd, 0, fresh.size() - 1});
    return true;
  });
  // Phase one left `previous` untouched: read again, by content.
  if (went_back) return DiffListingBody(previous, body, scope, mapper, CompareBy::kContent);
  if (!read) return std::nullopt;
  while (old < known.size()) steps.push_back({Step::Kind::kDelete, old++});

  // Phase two moves everything into place.
  DiffResult result;
  result.next.reserve(steps.size());
  for (const Step& step : steps) {
    switch (step.kind) {
      case Step::Kind::kKeep: {
        KnownEntry& kept = (*previous)[step.previous];
        kept.modify_index = step.modify_index;  // so the next comparison is exact
        result.next.push_back(std::move(kept));
        break;
      }
      case Step::Kind::kUpdate:
        fresh[step.fresh].key = std::move((*previous)[step.previous].key);
        result.next.push_back(std::move(fresh[step.fresh]));
        result.events.push_back(MakeEvent(DataChangedEvent::Type::kUpdated, result.next.back()));
        break;
      case Step::Kind::kAdd:
        result.next.push_back(std::move(fresh[step.fresh]));
        result.events.push_back(MakeEvent(DataChangedEvent::Type::kAdded, result.next.back()));
        break;
      case Step::Kind::kDelete:
        result.events.push_back(
            MakeEvent(DataChangedEvent::Type::kDeleted, (*previous)[step.previous]));
        break;
    }
  }
  previous->clear();
  return result;
}

std::vector<DataChangedEvent> ReplayEvents(const Snapshot& snapshot) {
  std::vector<DataChangedEvent> events;
  events.reserve(snapshot.size());
  for (const KnownEntry& entry : snapshot) {
    events.push_back(MakeEvent(DataChangedEvent::Type::kAdded, entry));
  }
  return events;
}

}  // namespace registry::watch
