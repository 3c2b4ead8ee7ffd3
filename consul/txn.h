// SPDX-License-Identifier: Apache-2.0
// consul/txn.h
//
// The transaction endpoint (PUT /v1/txn) for KV operations, as a request builder and a
// response parser (see kv.h for why they are separate from execution). All operations of a
// transaction are applied atomically: either every one succeeds (HTTP 200, one index for all
// writes) or none is applied (HTTP 409 with one error per failed operation). A rolled-back
// transaction is a normal result (committed == false), not an error.
//
// Thread safety: pure functions.
#ifndef CONSUL_TXN_H_
#define CONSUL_TXN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "consul/http_types.h"
#include "consul/kv.h"
#include "consul/query.h"

namespace registry::consul {

// Operations per transaction accepted by Consul >= 1.14 (older servers accept 64).
inline constexpr size_t kMaxTxnOps = 128;
// Consul's default txn_max_req_len: the whole JSON body must fit.
inline constexpr size_t kMaxTxnBodyBytes = 524288;

enum class TxnVerb {
  kSet,             // write value+flags
  kCas,             // write if ModifyIndex == index (0: only if absent)
  kLock,            // write and acquire with session
  kUnlock,          // write and release session's lock
  kGet,             // read key; fails the txn if absent
  kGetOrEmpty,      // read key; absent -> an entry holding only the key, no failure
  kGetTree,         // read every key under the prefix
  kCheckIndex,      // fail unless ModifyIndex == index
  kCheckSession,    // fail unless the key is held by session
  kCheckNotExists,  // fail if the key exists
  kDelete,          // delete key
  kDeleteTree,      // delete every key under the prefix
  kDeleteCas,       // delete if ModifyIndex == index
};

// Consul's verb string: "set", "get-or-empty", "delete-cas", ...
const char* TxnVerbName(TxnVerb verb);

// One KV operation. Use the factories; fields a verb does not use are not sent.
struct TxnOp {
  TxnVerb verb = TxnVerb::kGet;
  std::string key;
  std::string value;    // raw bytes; set, cas, lock, unlock
  uint64_t flags = 0;   // set, cas, lock, unlock
  uint64_t index = 0;   // cas, check-index, delete-cas
  std::string session;  // lock, unlock, check-session

  static TxnOp Set(std::string key, std::string value, uint64_t flags = 0);
  static TxnOp Cas(std::string key, std::string value, uint64_t index, uint64_t flags = 0);
  static TxnOp Lock(std::string key, std::string value, std::string session, uint64_t flags = 0);
  static TxnOp Unlock(std::string key, std::string value, std::string session, uint64_t flags = 0);
  static TxnOp Get(std::string key);
  static TxnOp GetOrEmpty(std::string key);
  static TxnOp GetTree(std::string prefix);
  static TxnOp CheckIndex(std::string key, uint64_t index);
  static TxnOp CheckSession(std::string key, std::string session);
  static TxnOp CheckNotExists(std::string key);
  static TxnOp Delete(std::string key);
  static TxnOp DeleteTree(std::string prefix);
  static TxnOp DeleteCas(std::string key, uint64_t index);
};

// Why Consul refused a transaction or one of its operations. Decided here, from Consul's reasons
// (TxnFailureOfReason, TxnFailureOf), so that no caller matches Consul's texts.
enum class TxnFailure {
  kNone,  // not refused: committed, or an OK status
  // A lock names a session Consul does not know (it expired or was destroyed):
  // 'invalid session "<id>"'.
  kInvalidSession,
  // A lock of a key still under the lock-delay of the session that held it last:
  // 'failed to lock key "<key>" due to lock delay'. Consul looks for lock-delays before applying
  // anything, so a transaction refused for one says nothing about its other operations.
  kLockDelay,
  // A lock of a key another session holds: 'failed to lock key "<key>", lock is already held'.
  kAlreadyHeld,
  // A condition did not hold: check-index, check-session, check-not-exists, cas, delete-cas, get
  // of an absent key, unlock of a key the session does not hold ('failed index check for key
  // ...', 'key "<key>" exists', 'failed to set key "<key>", index is stale', ...).
  kCheckFailed,
  // More operations than the server accepts (64 before Consul 1.14): the server's 413
  // 'Transaction contains too many operations (65 > 64)', or the client's own refusal. Only an
  // error status says so, never a rolled-back operation.
  kTooManyOperations,
  // The token lacks an ACL right: 'Permission denied'. ParseTxnResponse returns such a rollback
  // as a PermissionDenied status, never as a result.
  kPermissionDenied,
  kOther,  // any other reason
};

struct TxnError {
  size_t op_index = 0;                      // position of the failed op in the request
  TxnFailure failure = TxnFailure::kOther;  // what `what` says (TxnFailureOfReason)
  std::string what;                         // Consul's reason, for messages
};

struct TxnResult {
  bool committed = false;
  // committed: the entries produced by the ops, in op order, as Consul returns them: reads
  // return entries (get-or-empty of an absent key: an entry holding only the key); writes,
  // check-index and check-session return the entry with an empty value; deletes and
  // check-not-exists return nothing.
  std::vector<DirEntry> results;
  // !committed: why, per failed op.
  std::vector<TxnError> errors;
  // Present only if the server sent X-Consul-Index. Consul sends none for transactions, so
  // do not rely on it.
  std::optional<QueryMeta> meta;

  // True if any operation was refused for `failure` (never when committed).
  bool FailedWith(TxnFailure failure) const;
};

// What Consul's reason for refusing an operation (TxnError::what) says; never kNone. Reasons are
// compared case-insensitively, and the keys and session ids they quote are not read.
TxnFailure TxnFailureOfReason(absl::string_view what);

// What an error of ParseTxnResponse (or Client::Txn) says of the transaction: kPermissionDenied,
// kTooManyOperations, kInvalidSession (IsInvalidSession in errors.h) or kOther; kNone for OK.
TxnFailure TxnFailureOf(const absl::Status& status);

// Who may write the keys a transaction sets or deletes. It decides whether the transaction is
// sent again when its reply is lost (HttpRequest::replay_safe).
enum class Writers {
  // Other clients may write them too (the default). A set or delete whose reply was lost is not
  // sent again: the first send may have been applied and another client's write may have followed
  // it, which a resend would undo (the key goes A, B, A from one write of A; a reader that saw B
  // sees the older A come back). Such a write fails Unavailable, outcome unknown.
  kShared,
  // Only this caller writes them (a lock's own queue entry): a transaction that applies the same
  // twice is sent again when its reply is lost.
  kOnlyThisCaller,
};

// True when `ops` may be sent again after a lost reply. They must apply the same twice: only set,
// lock, get, get-or-empty, get-tree, delete and delete-tree (a lock repeated by the session that
// holds the key changes nothing and commits again, with the same ModifyIndex; a check, a
// compare-and-set or an unlock would see the first apply's work). And with kShared, they must
// write nothing but locks: no set, delete or delete-tree.
bool ReplaySafe(absl::Span<const TxnOp> ops, Writers writers);

// PUT /v1/txn with the ops as a JSON array (replay_safe as ReplaySafe(ops, writers); a request
// that is not is sent on a new connection). Errors (InvalidArgument naming the op, its verb and
// key): no ops or more than kMaxTxnOps; an empty key (except get-tree/delete-tree prefixes) or
// one starting with '/'; a value over kMaxValueBytes; lock/unlock/check-session without a
// session; a body over kMaxTxnBodyBytes.
absl::StatusOr<HttpRequest> BuildTxnRequest(absl::Span<const TxnOp> ops,
                                            Writers writers = Writers::kShared);

// 200 -> committed with results; 409 -> rolled back with errors; anything else as errors.h.
absl::StatusOr<TxnResult> ParseTxnResponse(const HttpRequest& request,
                                           const HttpResponse& response);

}  // namespace registry::consul

#endif  // CONSUL_TXN_H_
