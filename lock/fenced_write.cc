// SPDX-License-Identifier: Apache-2.0
// lock/fenced_write.cc
//
// Fenced writes of a TwoTierLock (PersistIfHeld, DeleteIfHeld): single Consul transactions that
// check the hold's index on the lock's fence key before writing, so they never write once Consul
// has taken the lock away.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_text.h"
#include "consul/transport.h"
#include "consul/txn.h"
#include "lock/lock_core.h"
#include "lock/lock_metrics.h"
#include "lock/remote_lock.h"
#include "lock/two_tier_lock.h"
#include "repository/key_space.h"

namespace registry::lock {
namespace {

// How many times a fenced write whose reply was lost is sent again before its caller is told
// that the outcome is unknown.
constexpr int kMaxFencedResends = 2;

// Runs check-index(`hold` on its fence key) + `writes` as one txn, through the instance's
// bookkeeping of `consul_key` (and with `tree` its subtree), as Persist and Delete do: once
// written, the keys are no longer re-created with their old values after a session loss. A lost
// reply is resent (the check is made again, so it lands only while the hold lasts), at most
// kMaxFencedResends times; `*unknown_before` tells whether an earlier attempt's reply was lost.
absl::StatusOr<consul::TxnResult> RunFencedTxn(LockCore& core, const RemoteHold& hold,
                                               const std::string& consul_key, bool tree,
                                               std::vector<consul::TxnOp> writes,
                                               bool* unknown_before) {
  std::vector<consul::TxnOp> ops;
  ops.reserve(writes.size() + 1);
  // The fence key still at this hold's index: held by this hold, not an earlier or later one.
  ops.push_back(consul::TxnOp::CheckIndex(hold.key, hold.index));
  for (consul::TxnOp& write : writes) ops.push_back(std::move(write));
  absl::StatusOr<consul::TxnResult> result;
  core.session()
      .PersistentWrite(consul_key, tree,
                       [&]() -> absl::Status {
                         consul::UnknownOutcomes unknown(*core.canceller(), kMaxFencedResends);
                         do {
                           result = core.client().Txn(ops, core.canceller());
                         } while (!result.ok() && unknown.Retry(result.status()));
                         *unknown_before = !unknown.last().ok();
                         if (!result.ok()) return result.status();
                         // Rolled back: nothing written, the bookkeeping stays as it is.
                         return result->committed ? absl::OkStatus()
                                                  : absl::AbortedError("fenced write rolled back");
                       })
      .IgnoreError();  // `result` says what happened
  return result;
}

}  // namespace

absl::Status TwoTierLock::FencedWrite(absl::string_view op, absl::string_view key,
                                      const std::string& consul_key, bool tree,
                                      std::vector<consul::TxnOp> writes) {
  const std::string what = absl::StrCat(op, " '", key, "' under ", what_);
  RemoteHold held;
  uint64_t hold = 0;
  {
    absl::MutexLock lock(&mu_);
    const Hold* current = HeldBy(std::this_thread::get_id());
    if (current == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, ": the ", noun_, " is not held by this thread; nothing written"));
    }
    if (!current->lost.ok()) {
      SeriesOf(&LockFamilies::lock_fenced_writes_refused, kind_).Increment();
      return absl::AbortedError(absl::StrCat(what, ": the ", noun_, " was lost (",
                                             current->lost.message(), "); nothing written"));
    }
    held = current->remote;
    hold = current->id;
  }
  if (!core_->BeginCall()) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": ", core_->closed_status().message()));
  }
  bool unknown_before = false;
  absl::StatusOr<consul::TxnResult> result =
      RunFencedTxn(*core_, held, consul_key, tree, std::move(writes), &unknown_before);
  core_->EndCall();
  if (!result.ok()) {
    return Prefixed(what, result.status());
  }
  if (result->committed) return absl::OkStatus();
  for (const consul::TxnError& error : result->errors) {
    if (error.op_index != 0) continue;
    SeriesOf(&LockFamilies::lock_fenced_writes_refused, kind_).Increment();
    MarkLost(hold, absl::AbortedError(absl::StrCat(
                       "lock key '", held.key, "' is no longer held by session ", held.session)));
    return absl::AbortedError(absl::StrCat(
        what, ": this instance no longer holds the lock (", error.what, "); ",
        unknown_before ? "whether an earlier attempt whose reply was lost was written is unknown"
                       : "nothing written"));
  }
  return absl::AbortedError(
      absl::StrCat(what, ": transaction rolled back: ",
                   result->errors.empty() ? "no reason given" : result->errors[0].what));
}

absl::Status TwoTierLock::FencedPersist(absl::string_view key, absl::string_view value) {
  if (absl::Status status = ValidateRepositoryKey(key); !status.ok()) {
    return registry::Prefixed(absl::StrCat("PersistIfHeld under ", what_), status);
  }
  const std::string consul_key = core_->key_space().ConsulKey(key);
  // Delete, then set: a plain set keeps a holder session, and like Persist a fenced persist
  // leaves the key persistent.
  std::vector<consul::TxnOp> writes;
  writes.push_back(consul::TxnOp::Delete(consul_key));
  writes.push_back(consul::TxnOp::Set(consul_key, std::string(value)));
  return FencedWrite("PersistIfHeld", key, consul_key, /*tree=*/false, std::move(writes));
}

absl::Status TwoTierLock::FencedDelete(absl::string_view key) {
  if (absl::Status status = ValidateRepositoryKey(key); !status.ok()) {
    return registry::Prefixed(absl::StrCat("DeleteIfHeld under ", what_), status);
  }
  const KeySpace& space = core_->key_space();
  std::vector<consul::TxnOp> writes;
  const std::string consul_key = space.ConsulKey(key);
  writes.push_back(consul::TxnOp::Delete(consul_key));
  writes.push_back(consul::TxnOp::DeleteTree(space.TreePrefix(key)));
  return FencedWrite("DeleteIfHeld", key, consul_key, /*tree=*/true, std::move(writes));
}

}  // namespace registry::lock
