// SPDX-License-Identifier: Apache-2.0
// repository/entry_listing.h
//
// The read behind Repository::ListEntries (internal to repository/): a subtree's keys as Consul
// holds them, raw values, flags and which keys a session holds, from one consistent recursive
// read, so that a backup is one snapshot of the store.
//
// Thread safety: a free function; `client` and `canceller` are thread-safe.
#ifndef REPOSITORY_ENTRY_LISTING_H_
#define REPOSITORY_ENTRY_LISTING_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "registry/repository.h"
#include "repository/key_space.h"

namespace registry {

// Every key of the subtree of the valid repository key `key` ("/" the whole namespace), sorted
// by key; a key a session holds is ephemeral. One `?recurse&consistent` read of the Consul
// prefix of `key` (its Consul key without a trailing '/', so that the key itself comes in the
// same snapshot as its tree): siblings that merely share the name ("/ab" for "/a") are read and
// dropped, and so is every Consul key that maps to no repository key (the folder keys of locks).
absl::StatusOr<std::vector<Repository::StoredEntry>> ListSubtreeEntries(
    consul::Client& client, consul::Canceller& canceller, const KeySpace& space,
    absl::string_view key);

// True iff repository key `candidate` is `key` or below it ("/" covers every key).
bool InSubtree(absl::string_view key, absl::string_view candidate);

}  // namespace registry

#endif  // REPOSITORY_ENTRY_LISTING_H_
