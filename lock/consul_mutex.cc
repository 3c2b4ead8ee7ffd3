// SPDX-License-Identifier: Apache-2.0
// lock/consul_mutex.cc
//
// The Consul mutex: its acquire rounds (a txn lock, then blocking reads while another session
// holds the key, timed retries under lock-delay), fenced release, and the release of an acquire
// whose outcome is unknown.
#include "lock/consul_mutex.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/kv.h"
#include "consul/query.h"
#include "consul/transport.h"
#include "consul/txn.h"

namespace registry::lock {

ConsulMutex::ConsulMutex(LockCore& core, std::string name, std::string key)
    : core_(core), name_(std::move(name)), key_(std::move(key)) {}

absl::Status ConsulMutex::Prefixed(absl::string_view op, const absl::Status& status) const {
  return registry::Prefixed(absl::StrCat(op, ": lock '", name_, "'"), status);
}

absl::StatusOr<std::optional<RemoteHold>> ConsulMutex::Acquire(absl::Time deadline,
                                                               absl::Time request_deadline,
                                                               absl::string_view op,
                                                               PendingRelease* pending_release) {
  return KeyAcquisition(core_, name_, key_, deadline, request_deadline, op, pending_release).Run();
}

absl::StatusOr<bool> ConsulMutex::FencedRelease(const RemoteHold& hold) {
  const consul::TxnOp release[] = {consul::TxnOp::CheckIndex(key_, hold.index),
                                   consul::TxnOp::Unlock(key_, "", hold.session)};
  ASSIGN_OR_RETURN(consul::TxnResult result, core_.client().Txn(release, core_.canceller()));
  return result.committed;
}

absl::Status ConsulMutex::Release(const RemoteHold& hold) {
  RemoteHold current = hold;
  bool reread = false;
  return ReleaseWithRetries(
      core_,
      [&]() -> absl::StatusOr<bool> {
        ASSIGN_OR_RETURN(bool released, FencedRelease(current));
        // Refused: the key is no longer at this hold's index. Normally it is not ours any more;
        // but if it is (someone rewrote the key during the hold), release it at its new index:
        // tier 1 is still this thread's, so no later hold of this process can own it yet.
        if (released || std::exchange(reread, true)) return true;
        absl::StatusOr<consul::KvGetResult> read =
            core_.client().KvGet(key_, consul::ConsistentRead(), core_.canceller());
        if (!read.ok() || !read->entry.has_value() || read->entry->session != hold.session) {
          return true;  // not bound to the session
        }
        current.index = read->entry->modify_index;
        return false;
      },
      [&](const absl::Status& error) { return Prefixed("Unlock", error); });
}

void ConsulMutex::ReleasePending(const PendingRelease& pending) {
  const std::string& session = pending.session;
  // Tier 1 is still reserved, so no hold of this process can own the key now: if it is bound to
  // `session`, that is the lost acquire, released at the index read (fenced like any release).
  // A cut acquire may still be applied after the first look, hence a second one. Best effort:
  // if this fails too, the key goes when the session does.
  for (int look = 0; look < 2; ++look) {
    absl::StatusOr<consul::KvGetResult> read =
        core_.client().KvGet(key_, consul::ConsistentRead(), core_.canceller());
    if (!read.ok()) return;
    if (read->entry.has_value() && read->entry->session == session) {
      FencedRelease(RemoteHold{session, key_, read->entry->modify_index}).IgnoreError();
    }
  }
}

}  // namespace registry::lock
