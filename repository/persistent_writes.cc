// SPDX-License-Identifier: Apache-2.0
// repository/persistent_writes.cc
#include "repository/persistent_writes.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/transport.h"
#include "consul/txn.h"

namespace registry {
namespace {

using consul::TxnOp;

// Optimistic writes (CAS on ModifyIndex) retry on conflict; this many conflicts in a row mean
// the key is written so often that the caller should know.
constexpr int kMaxCasAttempts = 64;

absl::Status CasConflict(absl::string_view key) {
  return absl::AbortedError(absl::StrCat("key '", Abbreviated(key), "' kept changing during ",
                                         kMaxCasAttempts, " compare-and-set attempts"));
}

// An upper bound of the JSON bytes a set of `key` = `value` adds to a transaction body: the
// value in base64, the key (escaped at worst 6 bytes per byte), the field names.
size_t SetBytes(absl::string_view key, absl::string_view value) {
  return (value.size() + 2) / 3 * 4 + 6 * key.size() + 80;
}

// True when a set of `key` = `value` fits a transaction of its own.
bool FitsOneTxn(absl::string_view key, absl::string_view value) {
  return SetBytes(key, value) + 2 <= consul::kMaxTxnBodyBytes;
}

// The error of a write whose reply was lost, said as such: it is not sent again (another
// instance may have written the key since, and a resend would undo that write), so the caller
// learns that it may or may not have been applied. Code and payloads stay (IsUnknownOutcome).
absl::Status OutcomeUnknown(const absl::Status& error) {
  if (!consul::IsUnknownOutcome(error)) return error;
  return Prefixed(
      "outcome unknown, the write may or may not have been applied (not sent again, since another "
      "instance may have written the key meanwhile; read it to learn which)",
      error);
}

// Sends `ops` once: a lost reply is the caller's answer (OutcomeUnknown).
absl::StatusOr<consul::TxnResult> SendOnce(consul::Client& client, consul::Canceller& canceller,
                                           absl::Span<const TxnOp> ops) {
  absl::StatusOr<consul::TxnResult> sent = client.Txn(ops, &canceller);
  if (!sent.ok()) return OutcomeUnknown(sent.status());
  return sent;
}

absl::Status RolledBack(absl::string_view what, const consul::TxnResult& result) {
  return absl::InternalError(
      absl::StrCat(what, " transaction rolled back: ",
                   result.errors.empty() ? "no reason given" : result.errors[0].what));
}

// Writes `value` iff `consul_key` is still as `current` (read just before) says: a
// check-and-set PUT, which keeps a holder; or with `unbind`, for a key a session holds, a PUT
// that releases it from that session (applied only while that session holds it), which leaves
// it persistent. A plain PUT rather than a transaction: the value travels as is, so any value
// up to Consul's limit fits. True iff written.
absl::StatusOr<bool> ConditionalWrite(consul::Client& client, consul::Canceller& canceller,
                                      const std::string& consul_key, absl::string_view value,
                                      const std::optional<consul::DirEntry>& current, bool unbind) {
  consul::KvPutOptions put;
  if (unbind && current.has_value() && !current->session.empty()) {
    put.release = current->session;
  } else {
    put.cas = current.has_value() ? current->modify_index : 0;
  }
  return client.KvPut(consul_key, value, put, &canceller);
}

// True when a ConditionalWrite made against `before` whose reply was lost cannot have been
// applied, and never will be unless a resend is: the key is still there, unchanged (same
// ModifyIndex, same holder). Both the lost write and its resend are conditioned on that state,
// so at most one of them lands, as the first change after it. (An absent key proves nothing: a
// create, a delete by another instance, and the lost create landing late would bring the key
// back after the caller was answered.)
bool StillUnwritten(const std::optional<consul::DirEntry>& before,
                    const std::optional<consul::DirEntry>& now) {
  return before.has_value() && now.has_value() && now->modify_index == before->modify_index &&
         now->session == before->session;
}

enum class AfterRead { kPersist, kUpdate };

// A persist or an update by a read, then a ConditionalWrite (a persist unbinds a held key; an
// update of an absent key is NotFound): for a value too large for a transaction body, and for
// a persist that found the key held by a session. A write whose reply was lost is sent again
// only when a fresh read shows it did not land (StillUnwritten); otherwise its outcome is the
// caller's answer.
absl::Status WriteAfterRead(consul::Client& client, consul::Canceller& canceller,
                            absl::string_view key, const std::string& consul_key,
                            absl::string_view value, AfterRead what) {
  consul::UnknownOutcomes unknown(canceller, kMaxUnknownOutcomes);
  absl::Status lost;                        // the last attempt's unknown outcome, if it had one
  std::optional<consul::DirEntry> lost_on;  // the state that attempt was conditioned on
  for (int attempt = 0; attempt < kMaxCasAttempts; ++attempt) {
    ASSIGN_OR_RETURN(consul::KvGetResult current,
                     client.KvGet(consul_key, consul::ConsistentRead(), &canceller));
    if (!lost.ok() && !StillUnwritten(lost_on, current.entry)) return OutcomeUnknown(lost);
    if (what == AfterRead::kUpdate && !current.entry.has_value()) {
      return absl::NotFoundError("the key does not exist");
    }
    absl::StatusOr<bool> written = ConditionalWrite(client, canceller, consul_key, value,
                                                    current.entry, what == AfterRead::kPersist);
    if (written.ok() && *written) return absl::OkStatus();
    lost = written.status();
    lost_on = std::move(current.entry);
    if (!written.ok() && !unknown.Retry(written.status())) return OutcomeUnknown(lost);
  }
  return lost.ok() ? CasConflict(key) : OutcomeUnknown(lost);
}

}  // namespace

absl::Status PersistKey(consul::Client& client, consul::Canceller& canceller, absl::string_view key,
                        const std::string& consul_key, absl::string_view value) {
  if (!FitsOneTxn(consul_key, value)) {
    return WriteAfterRead(client, canceller, key, consul_key, value, AfterRead::kPersist);
  }
  const std::vector<TxnOp> ops = {TxnOp::Set(consul_key, std::string(value))};
  ASSIGN_OR_RETURN(consul::TxnResult result, SendOnce(client, canceller, ops));
  if (!result.committed) return RolledBack("persist", result);
  if (result.results.empty() || result.results[0].session.empty()) return absl::OkStatus();
  // A set keeps the session holding the key: it was ephemeral, and must be made persistent.
  return WriteAfterRead(client, canceller, key, consul_key, value, AfterRead::kPersist);
}

absl::Status UpdateKey(consul::Client& client, consul::Canceller& canceller, absl::string_view key,
                       const std::string& consul_key, absl::string_view value) {
  if (!FitsOneTxn(consul_key, value)) {
    return WriteAfterRead(client, canceller, key, consul_key, value, AfterRead::kUpdate);
  }
  // The get fails the transaction when the key is absent; a set keeps the holder's session.
  const std::vector<TxnOp> ops = {TxnOp::Get(consul_key),
                                  TxnOp::Set(consul_key, std::string(value))};
  ASSIGN_OR_RETURN(consul::TxnResult result, SendOnce(client, canceller, ops));
  if (result.committed) return absl::OkStatus();
  for (const consul::TxnError& error : result.errors) {
    if (error.op_index == 0) return absl::NotFoundError("the key does not exist");
  }
  return RolledBack("update", result);
}

absl::Status DeleteTree(consul::Client& client, consul::Canceller& canceller,
                        const std::string& consul_key, const std::string& tree_prefix) {
  std::vector<TxnOp> ops;
  // The key and the tree below it go together; "<ns>/a/" never matches "<ns>/ab".
  if (!consul_key.empty()) ops.push_back(TxnOp::Delete(consul_key));
  ops.push_back(TxnOp::DeleteTree(tree_prefix));
  ASSIGN_OR_RETURN(consul::TxnResult result, SendOnce(client, canceller, ops));
  return result.committed ? absl::OkStatus() : RolledBack("delete", result);
}

std::vector<BatchSlice> SliceBatch(absl::Span<const std::pair<std::string, std::string>> entries,
                                   size_t max_ops) {
  std::vector<BatchSlice> slices;
  const size_t max_keys = std::max<size_t>(1, max_ops);  // one set per key
  size_t begin = 0;
  size_t bytes = 2;  // "[]"
  for (size_t i = 0; i < entries.size(); ++i) {
    const size_t entry_bytes = SetBytes(entries[i].first, entries[i].second);
    const bool full = i - begin == max_keys || bytes + entry_bytes > consul::kMaxTxnBodyBytes;
    if (i > begin && full) {
      slices.push_back({begin, i});
      begin = i;
      bytes = 2;
    }
    bytes += entry_bytes;
  }
  if (begin < entries.size()) slices.push_back({begin, entries.size()});
  return slices;
}

absl::Status PersistSlice(consul::Client& client, consul::Canceller& canceller,
                          absl::Span<const std::pair<std::string, std::string>> entries,
                          BatchSlice slice) {
  if (slice.end - slice.begin == 1) {
    const auto& [consul_key, value] = entries[slice.begin];
    return PersistKey(client, canceller, consul_key, consul_key, value);
  }
  std::vector<TxnOp> ops;
  ops.reserve(slice.end - slice.begin);
  for (size_t i = slice.begin; i < slice.end; ++i) {
    ops.push_back(TxnOp::Set(entries[i].first, entries[i].second));
  }
  ASSIGN_OR_RETURN(consul::TxnResult result, SendOnce(client, canceller, ops));
  if (!result.committed) return RolledBack("persist batch", result);
  // Keys a session held kept it (see PersistKey): each is made persistent on its own.
  for (const consul::DirEntry& entry : result.results) {
    if (entry.session.empty()) continue;
    for (size_t i = slice.end; i-- > slice.begin;) {  // the last entry of the key wins
      if (entries[i].first != entry.key) continue;
      RETURN_IF_ERROR(WriteAfterRead(client, canceller, entry.key, entry.key, entries[i].second,
                                     AfterRead::kPersist));
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace registry
