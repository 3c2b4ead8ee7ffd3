// SPDX-License-Identifier: Apache-2.0
// lock/consul_fair_lock.cc
//
// The fair lock's rounds: register (entry + queue in one txn), wait on the predecessor's entry,
// re-read the queue when it changed, then take the owner key; the release unlocks the owner key
// and deletes the entry in one txn.
#include "lock/consul_fair_lock.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/query.h"
#include "consul/transport.h"
#include "consul/txn.h"
#include "lock/acquire_loop.h"
#include "lock/key_acquisition.h"

namespace registry::lock {
namespace {

// Entries of the instance's own session found ahead of its current entry are removed at most
// this many at a time (they are leftovers of attempts whose deletes were lost: rare).
constexpr size_t kMaxStaleRemovals = 32;

// One ConsulFairLock::Acquire call: queue rounds until the call's entry heads the queue, then
// the owner key's (KeyAcquisition).
class FairAcquisition final : public KeyAcquisition {
 public:
  FairAcquisition(LockCore& core, const std::string& name, const std::string& owner_key,
                  const std::string& queue, absl::Time deadline, absl::Time request_deadline,
                  absl::string_view op, PendingRelease* pending_release)
      : KeyAcquisition(core, name, owner_key, deadline, request_deadline, op, pending_release),
        prefix_(queue) {}

 private:
  std::optional<AcquireResult> Round(absl::Time now) override {
    // At the head, the owner key's rounds take over. (Should the instance session be replaced
    // meanwhile, they go on with its successor although the entry went with the old one: the
    // owner key still gives mutual exclusion; only this call's place in the queue is lost.)
    if (heads_queue_) {
      std::optional<AcquireResult> result = KeyAcquisition::Round(now);
      if (result.has_value() && result->ok() && result->value().has_value()) {
        (*result)->value().entry = entry_;
      }
      return result;
    }
    if (predecessor_.has_value()) return WaitForPredecessor(now);
    if (relist_) return Relist(now);
    return Register(now);
  }

  // The owner key's session (as the mutex's) and the call's entry.
  PendingRelease PendingAfterUnknownAcquire(const std::string& session) override {
    return {.session = session, .entry = entry_};
  }
  PendingRelease PendingWithoutUnknownAcquire() override {
    return {.session = session_, .entry = entry_};
  }

  // Creates (or, after a lost answer, re-takes) this call's entry and reads the queue, in one
  // txn: the read sees the entry.
  std::optional<AcquireResult> Register(absl::Time now) {
    consul::Canceller attempt(call(), AttemptDeadline(now));
    std::optional<AcquireResult> round;
    const std::string session = SessionForAttempt(&round);
    if (session.empty()) return round;
    if (session != session_) {  // a new entry for a new session; the old one went with its session
      session_ = session;
      entry_ = absl::StrCat(prefix_, NewEntryName(session, gen_), "/");
    }
    const consul::TxnOp ops[] = {
        consul::TxnOp::Lock(entry_, core().options().holder_value, session),
        consul::TxnOp::GetTree(prefix_)};
    absl::StatusOr<consul::TxnResult> registered = core().client().Txn(ops, &attempt);
    if (SessionRefused(registered, session)) return AfterSessionRefused(session);
    if (!registered.ok()) {
      const absl::Status& error = registered.status();
      if (!absl::IsCancelled(error) && !consul::IsNotSent(error)) {
        set_pending_release({.session = session_, .entry = entry_});
      }
      return RetryAfter(error);
    }
    Reached();
    if (!registered->committed) {
      return AcquireResult(Prefixed(absl::AbortedError(absl::StrCat(
          "queue entry '", entry_, "' refused: ",
          registered->errors.empty() ? "no reason given" : registered->errors[0].what))));
    }
    set_pending_release({.session = session_, .entry = entry_});  // if the call ends without a hold
    std::vector<consul::DirEntry> listed = std::move(registered->results);
    if (!listed.empty()) listed.erase(listed.begin());  // the lock op's own answer
    return Decide(listed);
  }

  // Blocks on the predecessor's entry until it changes or the time is up.
  std::optional<AcquireResult> WaitForPredecessor(absl::Time now) {
    absl::StatusOr<consul::KvGetResult> read =
        BlockingRead(predecessor_->key, predecessor_->modify_index, now);
    if (!read.ok()) return RetryAfter(read.status());
    Reached();
    if (read->entry.has_value() && read->entry->session == predecessor_->session) {
      predecessor_->modify_index = read->entry->modify_index;  // still queued ahead: wait on
      return std::nullopt;
    }
    predecessor_.reset();  // released, or its session ended: where is this call now?
    relist_ = true;
    return std::nullopt;
  }

  std::optional<AcquireResult> Relist(absl::Time now) {
    consul::Canceller attempt(call(), AttemptDeadline(now));
    absl::StatusOr<consul::KvListResult> listed =
        core().client().KvList(prefix_, consul::ConsistentRead(), &attempt);
    if (!listed.ok()) return RetryAfter(listed.status());
    Reached();
    relist_ = false;
    return Decide(listed->entries);
  }

  // The queue as `listed` shows it: on to the owner key if this call's entry is first, else the
  // entry to wait on.
  std::optional<AcquireResult> Decide(const std::vector<consul::DirEntry>& listed) {
    const std::vector<consul::DirEntry> queue = FairQueue(prefix_, listed);
    std::vector<std::string> stale;
    for (size_t i = 0; i < queue.size(); ++i) {
      const consul::DirEntry& entry = queue[i];
      if (entry.key != entry_) {
        if (entry.session == session_) stale.push_back(entry.key);
        continue;
      }
      if (!stale.empty()) return RemoveStale(stale);
      if (i == 0) {
        heads_queue_ = true;
      } else {
        predecessor_ = queue[i - 1];
      }
      return std::nullopt;
    }
    // The entry is gone (its session ended, or a recursive Delete took it): queue again, at the
    // back, with a new entry.
    session_.clear();
    return std::nullopt;
  }

  // Deletes entries of this instance's session ahead of this call's own: left by earlier calls
  // whose deletes were lost, they would otherwise make it wait on itself.
  std::optional<AcquireResult> RemoveStale(const std::vector<std::string>& stale) {
    std::vector<consul::TxnOp> deletes;
    for (size_t i = 0; i < stale.size() && i < kMaxStaleRemovals; ++i) {
      deletes.push_back(consul::TxnOp::Delete(stale[i]));
    }
    // Entries of this session: nothing but their deletes writes them again.
    absl::StatusOr<consul::TxnResult> removed =
        core().client().Txn(deletes, call(), consul::Writers::kOnlyThisCaller);
    relist_ = true;
    if (!removed.ok()) return RetryAfter(removed.status());
    Reached();
    return std::nullopt;
  }

  const std::string& prefix_;  // the queue's
  absl::BitGen gen_;
  std::string session_;  // the session of entry_; "" before the first registration
  std::string entry_;    // this call's entry key
  bool relist_ = false;  // the queue must be read again
  std::optional<consul::DirEntry> predecessor_;  // the entry waited on
  bool heads_queue_ = false;                     // entry_ is first: on to the owner key
};

}  // namespace

std::vector<consul::DirEntry> FairQueue(absl::string_view prefix,
                                        const std::vector<consul::DirEntry>& listed) {
  std::vector<consul::DirEntry> queue;
  for (const consul::DirEntry& entry : listed) {
    absl::string_view rest = entry.key;
    if (!absl::ConsumePrefix(&rest, prefix) || rest.size() < 2 || entry.session.empty()) continue;
    if (rest.find('/') != rest.size() - 1) continue;  // not exactly one segment and its '/'
    queue.push_back(entry);
  }
  std::sort(queue.begin(), queue.end(), [](const consul::DirEntry& a, const consul::DirEntry& b) {
    return a.create_index != b.create_index ? a.create_index < b.create_index : a.key < b.key;
  });
  return queue;
}

ConsulFairLock::ConsulFairLock(LockCore& core, std::string name, std::string owner_key,
                               std::string queue)
    : core_(core),
      name_(name),
      queue_(std::move(queue)),
      owner_(core, std::move(name), std::move(owner_key)) {}

absl::StatusOr<std::optional<RemoteHold>> ConsulFairLock::Acquire(absl::Time deadline,
                                                                  absl::Time request_deadline,
                                                                  absl::string_view op,
                                                                  PendingRelease* pending_release) {
  return FairAcquisition(core_, name_, owner_.consul_key(), queue_, deadline, request_deadline, op,
                         pending_release)
      .Run();
}

absl::Status ConsulFairLock::Release(const RemoteHold& hold) {
  // One txn: the owner key unlocked (fenced by the hold's index) and the entry deleted, so the
  // successor, woken by the delete, finds the owner key free. An entry belongs to one hold
  // only, so its delete needs no fence, and a resent one is harmless.
  const consul::TxnOp release[] = {consul::TxnOp::CheckIndex(hold.key, hold.index),
                                   consul::TxnOp::Unlock(hold.key, "", hold.session),
                                   consul::TxnOp::Delete(hold.entry)};
  auto unlock_error = [&](const absl::Status& error) {
    return Prefixed(absl::StrCat("Unlock: lock '", name_, "'"), error);
  };
  bool refused = false;
  absl::Status released = ReleaseWithRetries(
      core_,
      [&]() -> absl::StatusOr<bool> {
        ASSIGN_OR_RETURN(consul::TxnResult result, core_.client().Txn(release, core_.canceller()));
        refused = !result.committed;
        return true;
      },
      unlock_error);
  if (!released.ok() || !refused) return released;
  // The owner key is no longer at the hold's index: the mutex's release sorts out whether it is
  // still bound to the session; then the entry goes.
  RETURN_IF_ERROR(owner_.Release(hold));
  return ReleaseWithRetries(
      core_,
      [&]() -> absl::StatusOr<bool> {
        RETURN_IF_ERROR(DeleteOwnEntry(core_, hold.entry));
        return true;
      },
      unlock_error);
}

void ConsulFairLock::ReleasePending(const PendingRelease& pending) {
  const std::string& entry = pending.entry;
  // A registration cut by the deadline may still be applied after the first delete, hence a
  // second one. Best effort: an entry left behind goes with the session, and the instance's
  // next acquisition of this lock removes it (FairAcquisition::RemoveStale).
  if (!entry.empty() && DeleteOwnEntry(core_, entry).ok()) {
    DeleteOwnEntry(core_, entry).IgnoreError();
  }
  if (!pending.session.empty()) owner_.ReleasePending({.session = pending.session});
}

void ConsulFairLock::ForgetLostHold(const RemoteHold& hold) {
  if (!hold.entry.empty()) DeleteOwnEntry(core_, hold.entry).IgnoreError();
}

}  // namespace registry::lock
