// SPDX-License-Identifier: Apache-2.0
// repository/ephemeral_writer.cc
#include "repository/ephemeral_writer.h"

#include <vector>

#include "base/status_macros.h"

namespace registry {
namespace {

using consul::TxnFailure;
using consul::TxnOp;

bool FirstOpFailed(const consul::TxnResult& result) {
  for (const consul::TxnError& error : result.errors) {
    if (error.op_index == 0) return true;
  }
  return false;
}

}  // namespace

const char* BindOutcomeName(BindOutcome outcome) {
  switch (outcome) {
    case BindOutcome::kBound:
      return "bound";
    case BindOutcome::kExists:
      return "exists";
    case BindOutcome::kChanged:
      return "changed";
    case BindOutcome::kLockDelay:
      return "lock-delay";
    case BindOutcome::kBadSession:
      return "bad-session";
  }
  return "unknown";
}

absl::StatusOr<BindOutcome> AttemptCreateExclusive(consul::Client& client,
                                                   absl::string_view consul_key,
                                                   absl::string_view value,
                                                   absl::string_view session,
                                                   consul::Canceller* canceller) {
  const std::string key(consul_key);
  const std::vector<TxnOp> ops = {
      TxnOp::CheckNotExists(key),
      TxnOp::Lock(key, std::string(value), std::string(session)),
  };
  ASSIGN_OR_RETURN(consul::TxnResult result, client.Txn(ops, canceller));
  if (result.committed) return BindOutcome::kBound;
  if (FirstOpFailed(result)) return BindOutcome::kExists;
  if (result.FailedWith(TxnFailure::kInvalidSession)) return BindOutcome::kBadSession;
  if (result.FailedWith(TxnFailure::kLockDelay)) {
    // A lock-delay check runs before the existence check, so it says nothing about existence:
    // an existing key is a definite "no" without waiting the delay out.
    ASSIGN_OR_RETURN(consul::KvGetResult current,
                     client.KvGet(key, consul::ConsistentRead(), canceller));
    return current.entry.has_value() ? BindOutcome::kExists : BindOutcome::kLockDelay;
  }
  if (result.FailedWith(TxnFailure::kAlreadyHeld)) return BindOutcome::kExists;
  return BindOutcome::kChanged;
}

absl::StatusOr<BatchBindOutcome> AttemptCreateBatch(consul::Client& client,
                                                    absl::Span<const BindRequest> requests,
                                                    consul::Canceller* canceller) {
  std::vector<TxnOp> ops;
  ops.reserve(2 * requests.size());
  for (const BindRequest& request : requests) {
    ops.push_back(TxnOp::CheckNotExists(request.consul_key));
    ops.push_back(TxnOp::Lock(request.consul_key, request.value, request.session));
  }
  ASSIGN_OR_RETURN(consul::TxnResult result, client.Txn(ops, canceller));
  BatchBindOutcome outcome;
  if (result.committed) return outcome;
  if (result.FailedWith(TxnFailure::kInvalidSession)) {
    outcome.outcome = BindOutcome::kBadSession;
    return outcome;
  }
  for (const consul::TxnError& error : result.errors) {
    if (error.op_index % 2 == 0 && error.op_index / 2 < requests.size()) {
      outcome.existing.push_back(error.op_index / 2);  // its check-not-exists failed
    }
  }
  // A lock-delay refusal of an absent key: the keys of one lost session share their delay.
  outcome.outcome = outcome.existing.empty() && result.FailedWith(TxnFailure::kLockDelay)
                        ? BindOutcome::kLockDelay
                    : outcome.existing.empty() ? BindOutcome::kChanged
                                               : BindOutcome::kExists;
  return outcome;
}

absl::StatusOr<BindOutcome> ResolveUnknownOutcome(consul::Client& client,
                                                  absl::string_view consul_key,
                                                  absl::string_view value,
                                                  absl::string_view session, bool held_before,
                                                  consul::Canceller* canceller) {
  ASSIGN_OR_RETURN(consul::KvGetResult current,
                   client.KvGet(consul_key, consul::ConsistentRead(), canceller));
  const bool bound = current.entry.has_value() && current.entry->session == session &&
                     current.entry->value == value;
  if (!bound) return BindOutcome::kChanged;
  return held_before ? BindOutcome::kExists : BindOutcome::kBound;
}

absl::StatusOr<BindOutcome> AttemptBind(consul::Client& client, const BindRequest& request,
                                        consul::Canceller* canceller) {
  const std::string& key = request.consul_key;
  if (!request.exclusive) {
    // Most binds find the key absent, unheld or already ours: a lone "lock" binds it in one
    // request, on the kept-alive connection (a resend applies the same). Only a key another
    // session holds takes the read and the takeover below.
    const TxnOp lock[] = {TxnOp::Lock(key, request.value, request.session)};
    ASSIGN_OR_RETURN(consul::TxnResult locked, client.Txn(lock, canceller));
    if (locked.committed) return BindOutcome::kBound;
    if (locked.FailedWith(TxnFailure::kInvalidSession)) return BindOutcome::kBadSession;
    if (locked.FailedWith(TxnFailure::kLockDelay)) return BindOutcome::kLockDelay;
  }
  ASSIGN_OR_RETURN(consul::KvGetResult current,
                   client.KvGet(key, consul::ConsistentRead(), canceller));
  std::vector<TxnOp> ops;
  if (!current.entry.has_value()) {
    ops.push_back(TxnOp::CheckNotExists(key));
  } else {
    const consul::DirEntry& entry = *current.entry;
    const bool ours =
        entry.session == request.session || request.own_sessions.contains(entry.session);
    if (request.exclusive && !ours) return BindOutcome::kExists;
    ops.push_back(TxnOp::CheckIndex(key, entry.modify_index));
    // "lock" keeps LockIndex and refuses a key held by another session: delete it first.
    if (!entry.session.empty() && entry.session != request.session) {
      ops.push_back(TxnOp::Delete(key));
    }
  }
  ops.push_back(TxnOp::Lock(key, request.value, request.session));
  ASSIGN_OR_RETURN(consul::TxnResult result, client.Txn(ops, canceller));
  if (result.committed) return BindOutcome::kBound;
  if (result.FailedWith(TxnFailure::kInvalidSession)) return BindOutcome::kBadSession;
  if (result.FailedWith(TxnFailure::kLockDelay)) return BindOutcome::kLockDelay;
  return BindOutcome::kChanged;
}

}  // namespace registry
