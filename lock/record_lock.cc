// SPDX-License-Identifier: Apache-2.0
// lock/record_lock.cc
#include "lock/record_lock.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/query.h"
#include "consul/transport.h"
#include "consul/txn.h"

namespace registry::lock {

RecordAcquisition::RecordAcquisition(LockCore& core, const std::string& name,
                                     const std::string& prefix, absl::Time deadline,
                                     absl::Time request_deadline, absl::string_view op,
                                     PendingRelease* pending_release, absl::string_view noun)
    : AcquireLoop(core, name, deadline, request_deadline, op, pending_release, noun),
      prefix_(prefix) {}

std::optional<AcquireResult> RecordAcquisition::Round(absl::Time now) {
  if (wait_index_ != 0) return BlockOnTree(now);
  consul::Canceller attempt(call(), AttemptDeadline(now));
  std::optional<AcquireResult> round;
  const std::string session = SessionForAttempt(&round);
  if (session.empty()) return round;
  if (session != session_) {  // a new entry for a new session; the old one went with its session
    session_ = session;
    name_ = NewEntryName(session, gen_);
    entry_ = absl::StrCat(prefix_, name_, "/");
  }
  absl::StatusOr<consul::KvListResult> listed =
      core().client().KvList(prefix_, consul::ConsistentRead(), &attempt);
  if (!listed.ok()) return RetryAfter(listed.status());
  Reached();
  return Act(*listed, &attempt);
}

std::optional<AcquireResult> RecordAcquisition::BlockOnTree(absl::Time now) {
  absl::StatusOr<consul::KvListResult> listed = BlockingList(prefix_, wait_index_, now);
  if (!listed.ok()) return RetryAfter(listed.status());
  Reached();
  wait_index_ = 0;
  consul::Canceller attempt(call(), AttemptDeadline(absl::Now()));
  return Act(*listed, &attempt);
}

TreeView RecordAcquisition::View(const consul::KvListResult& listed) const {
  TreeView view;
  for (const consul::DirEntry& entry : listed.entries) {
    if (entry.key == prefix_) {
      view.record = entry;
      continue;
    }
    absl::string_view rest = entry.key;
    if (!absl::ConsumePrefix(&rest, prefix_) || !absl::ConsumeSuffix(&rest, "/") || rest.empty() ||
        absl::StrContains(rest, '/') || entry.session.empty()) {
      continue;  // not exactly one segment below, or not bound: no holder's entry
    }
    view.entries.insert(std::string(rest));
    if (entry.key == entry_) view.own = entry;
  }
  return view;
}

std::optional<AcquireResult> RecordAcquisition::Act(const consul::KvListResult& listed,
                                                    consul::Canceller* attempt) {
  const TreeView view = View(listed);
  Decision decision = Decide(view);
  if (auto* error = std::get_if<absl::Status>(&decision)) return AcquireResult(Prefixed(*error));
  if (std::holds_alternative<AlreadyHeld>(decision)) {
    if (!EntryListed(view)) {
      return AcquireResult(Prefixed(absl::InternalError("held without an entry")));
    }
    return AcquireResult(RemoteHold{session_, entry_, view.own->modify_index});
  }
  if (std::holds_alternative<WaitForChange>(decision)) {
    wait_index_ = std::max<uint64_t>(listed.meta.index, 1);
    return std::nullopt;
  }
  return RunTake(std::get<Take>(decision), view, attempt);
}

std::optional<AcquireResult> RecordAcquisition::RunTake(const Take& take, const TreeView& view,
                                                        consul::Canceller* attempt) {
  std::vector<consul::TxnOp> ops;
  if (take.lock_entry) {
    ops.push_back(consul::TxnOp::Lock(entry_, core().options().holder_value, session_));
  }
  const size_t first_prune = ops.size();
  for (const Prune& prune : take.prunes) {
    // Refused while the dead entry's key is under lock-delay: its holder may not know yet.
    const std::string key = absl::StrCat(prefix_, prune.name, "/");
    ops.push_back(consul::TxnOp::Lock(key, "", session_));
    ops.push_back(consul::TxnOp::Delete(key));
  }
  const size_t cas_op = ops.size();
  ops.push_back(consul::TxnOp::Cas(prefix_, take.record,
                                   view.record.has_value() ? view.record->modify_index : 0));
  absl::StatusOr<consul::TxnResult> taken = core().client().Txn(ops, attempt);
  if (SessionRefused(taken, session_)) return AfterSessionRefused(session_);
  if (!taken.ok()) {
    const absl::Status& error = taken.status();
    if (take.lock_entry && !absl::IsCancelled(error) && !consul::IsNotSent(error)) {
      set_pending_release({.entry = entry_});
    }
    return RetryAfter(error);
  }
  Reached();
  if (taken->committed) {
    if (take.lock_entry) set_pending_release({.entry = entry_});  // if the call ends without a hold
    if (!take.holds) return std::nullopt;
    return AcquireResult(RemoteHold{session_, entry_, taken->results[0].modify_index});
  }
  if (absl::Now() >= deadline()) return AcquireResult(std::optional<RemoteHold>());
  bool required_delayed = false;
  for (const consul::TxnError& error : taken->errors) {
    if (error.op_index == cas_op) return std::nullopt;  // the record changed: read again
    if (error.op_index < first_prune || error.op_index >= cas_op) continue;
    const Prune& prune = take.prunes[(error.op_index - first_prune) / 2];
    if (!prune.required) {
      skipped_.insert(prune.name);  // tidy it another time
    } else {
      required_delayed = true;
    }
  }
  if (required_delayed) return PauseUntil(absl::Now() + core().lock_retry());
  if (taken->FailedWith(consul::TxnFailure::kLockDelay))
    return std::nullopt;  // optional prunes only
  return AcquireResult(Prefixed(absl::AbortedError(
      absl::StrCat("the take was refused: ",
                   taken->errors.empty() ? "no reason given" : taken->errors[0].what))));
}

RecordLock::RecordLock(LockCore& core, std::string noun, std::string name, std::string prefix)
    : core_(core), noun_(std::move(noun)), name_(std::move(name)), prefix_(std::move(prefix)) {}

absl::Status RecordLock::Release(const RemoteHold& hold) {
  // The entry belongs to this hold only, so its delete needs no fence, and a resent one is
  // harmless. The record keeps the name until a taker prunes it.
  return ReleaseWithRetries(
      core_,
      [&]() -> absl::StatusOr<bool> {
        RETURN_IF_ERROR(DeleteOwnEntry(core_, hold.key));
        return true;
      },
      [&](const absl::Status& error) {
        return Prefixed(absl::StrCat("Unlock: ", noun_, " '", name_, "'"), error);
      });
}

void RecordLock::ReleasePending(const PendingRelease& pending) {
  // A txn cut by the deadline may still be applied after the first delete, hence a second one.
  // Best effort: an entry left behind goes with the session.
  const std::string& entry = pending.entry;
  if (!entry.empty() && DeleteOwnEntry(core_, entry).ok()) {
    DeleteOwnEntry(core_, entry).IgnoreError();
  }
}

void RecordLock::ForgetLostHold(const RemoteHold& hold) {
  DeleteOwnEntry(core_, hold.key).IgnoreError();
}

}  // namespace registry::lock
