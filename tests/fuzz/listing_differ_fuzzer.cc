// SPDX-License-Identifier: Apache-2.0
// Differential fuzz target: watch::DiffListingBody (the in-place differ reading a listing body)
// against the general path, consul::ParseKvListResponse + watch::DiffListing, from the same
// previous snapshot, scope, key mapper and comparison. What diff.h promises, and what is checked:
//   - nullopt leaves *previous untouched (the caller then takes the general path);
//   - a result equals DiffListing's on the listing, events and next snapshot alike;
//   - DiffListingBody may succeed where the general parser fails only because it never decodes
//     some values (keys outside the scope, keys unchanged by index, new keys the mapper ignores)
//     and one of those is not base64; everything else the general parser refuses, it refuses.
// Any disagreement traps. Input: a first byte choosing the scope, comparison, mapper and whether
// the two listings are written from the input (listing_text.h) or taken raw: the previous
// listing, a line "#", then the body.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "consul/kv.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/listing_text.h"
#include "watch/diff.h"

namespace registry::watch {
namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

std::optional<std::string> StripNamespace(absl::string_view key) {
  if (!absl::StartsWith(key, "ns/")) return std::nullopt;
  return std::string(key.substr(2));
}

std::optional<std::string> IgnoreX(absl::string_view key) {
  if (absl::StrContains(key, "x")) return std::nullopt;
  return "/" + std::string(key);
}

struct Setup {
  WatchScope scope;
  KeyMapper mapper;
  CompareBy compare;
};

Setup SetupFrom(uint8_t control) {
  constexpr const char* kScopes[] = {"", "ns/", "ns/a", "ns/a/"};
  const KeyMapper kMappers[] = {nullptr, StripNamespace, IgnoreX, nullptr};
  return Setup{WatchScope(kScopes[control & 3]), kMappers[(control >> 3) & 3],
               (control & 4) ? CompareBy::kContent : CompareBy::kModifyIndex};
}

// The general parser's answer for a listing body.
absl::StatusOr<consul::KvListResult> ParseGeneral(const std::string& body) {
  static const consul::HttpRequest request = *consul::BuildKvListRequest("ns/", {});
  consul::HttpResponse response;
  response.status = 200;
  response.headers.emplace_back("X-Consul-Index", "9");
  response.body = body;
  return consul::ParseKvListResponse(request, response);
}

// Whether DiffListingBody decodes the value of `entry` (see the rules in the header comment).
bool FastDecodes(const consul::DirEntry& entry, const Snapshot& previous, const Setup& setup) {
  if (!setup.scope.Contains(entry.key)) return false;
  auto known = std::lower_bound(
      previous.begin(), previous.end(), entry.key,
      [](const KnownEntry& e, const std::string& key) { return e.consul_key < key; });
  if (known != previous.end() && known->consul_key == entry.key) {
    return setup.compare == CompareBy::kContent || known->modify_index != entry.modify_index;
  }
  return !setup.mapper || setup.mapper(entry.key).has_value();
}

// The listing as the general parser would read it if values that are not base64 were null,
// with the keys of those entries; nullopt when the body has any other fault.
std::optional<std::vector<consul::DirEntry>> LenientEntries(const std::string& body,
                                                            std::vector<std::string>* bad_keys) {
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_array()) return std::nullopt;
  std::vector<consul::DirEntry> entries;
  for (nlohmann::json& item : json) {
    bool bad = false;
    if (item.is_object() && item.contains("Value") && item["Value"].is_string()) {
      std::string ignored;
      bad = !absl::Base64Unescape(item["Value"].get<std::string>(), &ignored);
      if (bad) item["Value"] = nullptr;
    }
    absl::StatusOr<consul::DirEntry> entry = consul::DirEntryFromJson(item, "entry");
    if (!entry.ok()) return std::nullopt;
    if (bad) bad_keys->push_back(entry->key);
    entries.push_back(*std::move(entry));
  }
  return entries;
}

void CheckSame(const DiffResult& fast, const DiffResult& reference) {
  Check(fast.events == reference.events);
  Check(fast.next == reference.next);
}

void Compare(const Setup& setup, const std::string& previous_body, const std::string& body) {
  // Replaying a reproducer with LISTING_DIFFER_VERBOSE=1 shows what was compared.
  if (std::getenv("LISTING_DIFFER_VERBOSE") != nullptr) {
    std::fprintf(stderr, "scope '%s' compare %s\nprevious: %s\nbody: %s\n",
                 setup.scope.consul_key().c_str(),
                 setup.compare == CompareBy::kContent ? "content" : "index",
                 absl::CHexEscape(previous_body).c_str(), absl::CHexEscape(body).c_str());
  }
  Snapshot previous;
  if (absl::StatusOr<consul::KvListResult> listed = ParseGeneral(previous_body); listed.ok()) {
    previous =
        DiffListing({}, std::move(listed->entries), setup.scope, setup.mapper, setup.compare).next;
  }
  Snapshot fast_previous = previous;
  const std::optional<DiffResult> fast =
      DiffListingBody(&fast_previous, body, setup.scope, setup.mapper, setup.compare);
  if (!fast.has_value()) {
    Check(fast_previous == previous);
    return;
  }
  absl::StatusOr<consul::KvListResult> general = ParseGeneral(body);
  if (general.ok()) {
    CheckSame(*fast, DiffListing(previous, std::move(general->entries), setup.scope, setup.mapper,
                                 setup.compare));
    return;
  }
  std::vector<std::string> bad_keys;
  std::optional<std::vector<consul::DirEntry>> lenient = LenientEntries(body, &bad_keys);
  Check(lenient.has_value() && !bad_keys.empty());
  for (const consul::DirEntry& entry : *lenient) {
    if (std::find(bad_keys.begin(), bad_keys.end(), entry.key) != bad_keys.end()) {
      Check(!FastDecodes(entry, previous, setup));
    }
  }
  CheckSame(*fast,
            DiffListing(previous, *std::move(lenient), setup.scope, setup.mapper, setup.compare));
}

}  // namespace
}  // namespace registry::watch

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const registry::watch::Setup setup = registry::watch::SetupFrom(data[0]);
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 0x20) {
    FuzzedDataProvider input(data + 1, size - 1);
    const std::string previous = registry::fuzz::GenerateListing(input);
    registry::watch::Compare(setup, previous, registry::fuzz::GenerateListing(input));
    return 0;
  }
  const size_t split = rest.find("\n#\n");
  if (split == std::string::npos) {
    registry::watch::Compare(setup, "[]", rest);
  } else {
    registry::watch::Compare(setup, rest.substr(0, split), rest.substr(split + 3));
  }
  return 0;
}
