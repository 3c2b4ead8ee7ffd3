// SPDX-License-Identifier: Apache-2.0
#include "watch/split_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"

namespace registry::watch {
namespace {

// One name one level below a folder ("<folder>x/" or "<folder>x"), with what is listed under it.
struct Name {
  absl::string_view name;
  size_t keys = 0;
  uint64_t max_index = 0;
};

// A run of names [lo, hi) sharing `prefix`; `single` when it is one name read as a key.
struct Group {
  absl::string_view prefix;
  size_t lo = 0;
  size_t hi = 0;
  size_t keys = 0;
  bool single = false;
};

// The listed keys starting with `prefix`: a contiguous run, since the listing is sorted.
absl::Span<const ListedKey> Under(absl::Span<const ListedKey> listing, absl::string_view prefix) {
  auto first =
      std::lower_bound(listing.begin(), listing.end(), prefix,
                       [](const ListedKey& listed, absl::string_view p) { return listed.key < p; });
  auto last = std::find_if(first, listing.end(), [prefix](const ListedKey& listed) {
    return !absl::StartsWith(listed.key, prefix);
  });
  return listing.subspan(first - listing.begin(), last - first);
}

uint64_t MaxIndex(absl::Span<const ListedKey> keys) {
  uint64_t max = 0;
  for (const ListedKey& listed : keys) max = std::max(max, listed.modify_index);
  return max;
}

// What `?keys&separator=/` on `folder` answers for `key`: up to the first '/' after the folder.
absl::string_view NameBelow(absl::string_view folder, absl::string_view key) {
  const size_t slash = key.find('/', folder.size());
  return slash == absl::string_view::npos ? key : key.substr(0, slash + 1);
}

std::vector<Name> NamesBelow(absl::string_view folder, absl::Span<const ListedKey> under) {
  std::vector<Name> names;
  for (const ListedKey& listed : under) {
    absl::string_view name = NameBelow(folder, listed.key);
    if (names.empty() || names.back().name != name) names.push_back(Name{name});
    names.back().keys++;
    names.back().max_index = std::max(names.back().max_index, listed.modify_index);
  }
  return names;
}

size_t CommonPrefixLength(absl::string_view a, absl::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

size_t CountKeys(const std::vector<Name>& names, size_t lo, size_t hi) {
  size_t keys = 0;
  for (size_t i = lo; i < hi; ++i) keys += names[i].keys;
  return keys;
}

// Splits `group` (two names or more) after the names' common prefix: a name equal to that
// prefix becomes a single, the others are grouped by their next character.
std::vector<Group> SplitGroup(const std::vector<Name>& names, const Group& group) {
  const absl::string_view first = names[group.lo].name;
  const size_t common = CommonPrefixLength(first, names[group.hi - 1].name);
  std::vector<Group> children;
  size_t i = group.lo;
  if (first.size() == common) {
    children.push_back(Group{first, i, i + 1, names[i].keys, /*single=*/true});
    ++i;
  }
  while (i < group.hi) {
    const char next = names[i].name[common];
    size_t end = i + 1;
    while (end < group.hi && names[end].name[common] == next) ++end;
    children.push_back(
        Group{names[i].name.substr(0, common + 1), i, end, CountKeys(names, i, end)});
    i = end;
  }
  return children;
}

// Groups `names` into at most `budget` groups, splitting the largest one while it holds more
// than `target` keys.
std::vector<Group> GroupNames(const std::vector<Name>& names, absl::string_view folder,
                              size_t budget, size_t target) {
  std::vector<Group> groups = {Group{folder, 0, names.size(), CountKeys(names, 0, names.size())}};
  while (true) {
    auto largest = groups.end();
    for (auto it = groups.begin(); it != groups.end(); ++it) {
      if (it->single || it->hi - it->lo < 2 || it->keys <= target) continue;
      if (largest == groups.end() || it->keys > largest->keys) largest = it;
    }
    if (largest == groups.end()) break;
    std::vector<Group> children = SplitGroup(names, *largest);
    if (groups.size() - 1 + children.size() > budget) break;
    const size_t at = largest - groups.begin();
    groups.erase(largest);
    groups.insert(groups.begin() + at, children.begin(), children.end());
  }
  return groups;
}

Probe MakeProbe(Probe::Kind kind, absl::string_view prefix, uint64_t start_index) {
  return Probe{kind, std::string(prefix), start_index};
}

}  // namespace

bool SplitPlan::Covers(const WatchScope& scope, absl::string_view name) const {
  if (!scope.Contains(name)) return true;
  // A tree probe reads every name under its prefix; a key probe its key; a guard its folder,
  // which the guard above it answers with.
  auto reads = [name](const Probe& probe) {
    return probe.kind == Probe::Kind::kTree ? absl::StartsWith(name, probe.prefix)
                                            : name == probe.prefix;
  };
  // Among disjoint prefixes in ascending order, only the last one not above `name` can be one of
  // its prefixes.
  const auto groups = probes.begin() + first_group;
  auto group = std::upper_bound(groups, probes.end(), name,
                                [](absl::string_view n, const Probe& p) { return n < p.prefix; });
  if (group != groups && reads(*(group - 1))) return true;
  return std::any_of(probes.begin(), groups, reads);
}

std::optional<SplitPlan> PlanSplit(const WatchScope& scope, absl::Span<const ListedKey> listing,
                                   const SplitLimits& limits) {
  const size_t in_scope = std::count_if(listing.begin(), listing.end(),
                                        [&](const ListedKey& k) { return scope.Contains(k.key); });
  if (in_scope <= limits.threshold || limits.max_queries < 3) return std::nullopt;
  const auto ascending = [](const ListedKey& a, const ListedKey& b) { return a.key < b.key; };
  if (!std::is_sorted(listing.begin(), listing.end(), ascending)) return std::nullopt;
  const size_t budget = static_cast<size_t>(limits.max_queries);

  SplitPlan plan;
  const std::string& root = scope.consul_key();
  if (root != scope.tree_prefix()) {
    // A watch on "ns/a" covers the key "ns/a" too, present or not.
    auto exact = std::find_if(listing.begin(), listing.end(),
                              [&root](const ListedKey& k) { return k.key == root; });
    plan.probes.push_back(
        MakeProbe(Probe::Kind::kKey, root, exact != listing.end() ? exact->modify_index : 0));
  }
  // Down the chain of folders with a single name below them, a guard on each.
  absl::string_view folder = scope.tree_prefix();
  std::vector<Name> names;
  while (true) {
    absl::Span<const ListedKey> under = Under(listing, folder);
    if (plan.probes.size() + 3 > budget) return std::nullopt;
    plan.probes.push_back(MakeProbe(Probe::Kind::kGuard, folder, MaxIndex(under)));
    names = NamesBelow(folder, under);
    const bool single_folder =
        names.size() == 1 && names[0].name != folder && absl::EndsWith(names[0].name, "/");
    if (!single_folder) break;
    folder = names[0].name;
  }
  // A guard answers with every name below its folder: when most names are single keys, it would
  // cost about what the listing it replaces costs.
  if (names.size() < 2 || names.size() * 2 > Under(listing, folder).size()) return std::nullopt;

  const size_t target = std::max<size_t>(1, limits.threshold / 16);
  std::vector<Group> groups = GroupNames(names, folder, budget - plan.probes.size(), target);
  if (groups.size() < 2) return std::nullopt;
  plan.first_group = plan.probes.size();
  for (const Group& group : groups) {
    uint64_t start = 0;
    for (size_t i = group.lo; i < group.hi; ++i) start = std::max(start, names[i].max_index);
    plan.probes.push_back(
        MakeProbe(group.single ? Probe::Kind::kKey : Probe::Kind::kTree, group.prefix, start));
  }
  return plan;
}

}  // namespace registry::watch
