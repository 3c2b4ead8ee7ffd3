// SPDX-License-Identifier: Apache-2.0
// repository/persistent_writes.h
//
// The requests behind persist, update and delete (internal to repository/). Each is one
// transaction, sent once: a write whose reply was lost (the server died, or the connection did)
// is answered Unavailable, outcome unknown, and not sent again. Other instances write the same
// keys, and a resend landing after one of their writes would undo it: the key would go A, B, A
// from one persist of A, and a watcher that saw B would see the older A come back. (Only a
// conditional write a fresh read proves unapplied is sent again: WriteAfterRead.) A persist is a
// transaction rather than a plain PUT because the transaction answers with the entry written: a
// set keeps the session holding a key, and only the answer tells that the key was ephemeral and
// must be unbound (a read and a PUT releasing it from its session follow, in that rare case
// only). Writing a key's current value again changes nothing in Consul, so watchers see nothing.
// A value too large for a transaction body takes a read and a conditional write (two round
// trips).
//
// Thread safety: free functions; `client` and `canceller` are thread-safe.
#ifndef REPOSITORY_PERSISTENT_WRITES_H_
#define REPOSITORY_PERSISTENT_WRITES_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "consul/canceller.h"
#include "consul/client.h"

namespace registry {

// Conditional writes of one call whose reply was lost and that a fresh read proved unapplied,
// made again.
inline constexpr int kMaxUnknownOutcomes = 3;

// Makes `consul_key` = `value`, persistent (no session holds it afterwards). `key` names it in
// errors.
absl::Status PersistKey(consul::Client& client, consul::Canceller& canceller, absl::string_view key,
                        const std::string& consul_key, absl::string_view value);

// Overwrites the existing `consul_key`, keeping the session that holds it, if any. NotFound if
// it does not exist.
absl::Status UpdateKey(consul::Client& client, consul::Canceller& canceller, absl::string_view key,
                       const std::string& consul_key, absl::string_view value);

// Deletes `consul_key` (unless empty: the namespace root) and every key under `tree_prefix`.
absl::Status DeleteTree(consul::Client& client, consul::Canceller& canceller,
                        const std::string& consul_key, const std::string& tree_prefix);

// The keys of one persist_batch transaction: entries [begin, end) of the batch.
struct BatchSlice {
  size_t begin;
  size_t end;
};

// Splits `entries` (Consul keys and values) into transactions of at most `max_ops` operations
// (one per key) whose bodies fit consul::kMaxTxnBodyBytes, in order. A value too large for any
// transaction gets a slice of its own (PersistBatch writes it as PersistKey does).
std::vector<BatchSlice> SliceBatch(absl::Span<const std::pair<std::string, std::string>> entries,
                                   size_t max_ops);

// Persists the keys of `slice` (as PersistKey, all or none of them). The error of a transaction
// that was not applied names no key; the caller does.
absl::Status PersistSlice(consul::Client& client, consul::Canceller& canceller,
                          absl::Span<const std::pair<std::string, std::string>> entries,
                          BatchSlice slice);

}  // namespace registry

#endif  // REPOSITORY_PERSISTENT_WRITES_H_
