#include "watch/diff.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"

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
  if (compare == CompareBy::kModifyIndex && known.modify_index != now.modify_index) return true;
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

bool WatchScope::Contains(absl::string_view key) const {
  return key == consul_key_ || absl::StartsWith(key, tree_prefix_);
}

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

std::vector<DataChangedEvent> ReplayEvents(const Snapshot& snapshot) {
  std::vector<DataChangedEvent> events;
  events.reserve(snapshot.size());
  for (const KnownEntry& entry : snapshot) {
    events.push_back(MakeEvent(DataChangedEvent::Type::kAdded, entry));
  }
  return events;
}

}  // namespace registry::watch
