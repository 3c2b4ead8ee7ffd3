// SPDX-License-Identifier: Apache-2.0
// repository/entry_listing.cc
#include "repository/entry_listing.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"

namespace registry {

bool InSubtree(absl::string_view key, absl::string_view candidate) {
  if (key == "/") return absl::StartsWith(candidate, "/");
  return candidate == key || (absl::StartsWith(candidate, key) && candidate.size() > key.size() &&
                              candidate[key.size()] == '/');
}

absl::StatusOr<std::vector<Repository::StoredEntry>> ListSubtreeEntries(
    consul::Client& client, consul::Canceller& canceller, const KeySpace& space,
    absl::string_view key) {
  // "ns/" for the root; "ns/a" for "/a", which covers "ns/a" and "ns/a/..." in one snapshot.
  const std::string prefix = key == "/" ? space.TreePrefix(key) : space.ConsulKey(key);
  absl::StatusOr<consul::KvListResult> listed =
      client.KvList(prefix, consul::ConsistentRead(), &canceller);
  if (!listed.ok()) return listed.status();
  std::vector<Repository::StoredEntry> entries;
  entries.reserve(listed->entries.size());
  for (consul::DirEntry& entry : listed->entries) {
    std::optional<std::string> repository_key = space.RepositoryKey(entry.key);
    if (!repository_key.has_value() || !InSubtree(key, *repository_key)) continue;
    entries.push_back({.key = *std::move(repository_key),
                       .value = std::move(entry.value),
                       .flags = entry.flags,
                       .ephemeral = !entry.session.empty()});
  }
  // Consul lists in key order, and keys under one prefix keep it; a server that did not would.
  auto by_key = [](const Repository::StoredEntry& a, const Repository::StoredEntry& b) {
    return a.key < b.key;
  };
  if (!std::is_sorted(entries.begin(), entries.end(), by_key)) {
    std::sort(entries.begin(), entries.end(), by_key);
  }
  return entries;
}

}  // namespace registry
