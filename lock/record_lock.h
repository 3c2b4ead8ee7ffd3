// SPDX-License-Identifier: Apache-2.0
// lock/record_lock.h
//
// What the recipes built on a holders record share (internal to lock/): the semaphore
// (consul_semaphore.h) and the read/write lock (consul_rw_lock.h). Their tree in Consul is
//
//   <prefix>                          the holders record (JSON), written by check-and-set
//   <prefix><session>.<16 hex>/       one holder's (or waiting writer's) entry, bound to its
//                                     instance session, created by the txn that names it
//
// - Rounds. Read the tree (consistent); the recipe decides on what it shows (Decide): the call
//   holds already (a txn whose answer was lost named its entry), it must wait, or a txn takes
//   its place: `lock` of the entry, prunes, then the record's check-and-set at the ModifyIndex
//   read. A waiter blocks on the tree's index (a blocking `?recurse` with the remaining time) and
//   decides again on what that read returned; a check-and-set that lost a race reads again.
// - Prunes. A name in the record whose entry is gone is dead: released, or its session ended. A
//   holder whose session ended may not know it yet, so a prune `lock`s the dead entry's key (then
//   deletes it) in the txn: Consul refuses that while the key is under the lock-delay set when
//   the session ended. A required prune refused so is retried every lock_retry; an optional one
//   (tidying) is left out of the next try.
// - Release. One delete of the entry (never reused: session + random number, so a late delete
//   cannot touch a later hold); the record keeps the name until a taker prunes it (a plain
//   delete sets no lock-delay, so that prune goes through at once).
//
// Thread safety: a RecordAcquisition is one call's state; a RecordLock may be used by several
// threads at once.
#ifndef LOCK_RECORD_LOCK_H_
#define LOCK_RECORD_LOCK_H_

#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "consul/kv.h"
#include "lock/acquire_loop.h"
#include "lock/lock_core.h"
#include "lock/remote_lock.h"

namespace registry::lock {

// The tree of a record lock as one read shows it.
struct TreeView {
  std::optional<consul::DirEntry> record;  // the record key, if it exists
  std::set<std::string> entries;           // names of the entries bound to a session
  std::optional<consul::DirEntry> own;     // the call's entry, if listed
};

// A dead entry to remove from the record: `required` if the call cannot go on with it there.
struct Prune {
  std::string name;
  bool required = true;
};

// What a round does after reading the tree.
struct AlreadyHeld {};    // the call's entry is named in the record: it holds
struct WaitForChange {};  // wait for the tree to change
struct Take {
  bool lock_entry = true;  // create (or keep) the call's entry
  bool holds = true;       // committed, the call holds; else it reads again (prune, register)
  std::vector<Prune> prunes;
  std::string record;  // the record's new JSON
};
using Decision = std::variant<AlreadyHeld, WaitForChange, Take, absl::Status>;

// At most this many prunes fit in one txn beside the entry's lock and the record's
// check-and-set (Consul 1.8 allows 64 ops, two per prune).
inline constexpr size_t kMaxPrunesPerTxn = 31;

// One Acquire of a record lock.
class RecordAcquisition : public AcquireLoop {
 public:
  // As AcquireLoop; `prefix` is the record key (ending with '/'); `noun` names the recipe.
  RecordAcquisition(LockCore& core, const std::string& name, const std::string& prefix,
                    absl::Time deadline, absl::Time request_deadline, absl::string_view op,
                    PendingRelease* pending_release, absl::string_view noun);

 protected:
  // What to do on `view`. The entry's name is entry_name(); prunes it has left out after a
  // lock-delay refusal are in skipped().
  virtual Decision Decide(const TreeView& view) = 0;

  const std::string& entry_name() const { return name_; }
  // True if `view` lists the call's entry, bound to its session (a recipe decides AlreadyHeld
  // only then).
  bool EntryListed(const TreeView& view) const {
    return view.own.has_value() && view.own->session == session_;
  }
  const std::set<std::string>& skipped() const { return skipped_; }

 private:
  std::optional<AcquireResult> Round(absl::Time now) override;
  std::optional<AcquireResult> BlockOnTree(absl::Time now);
  TreeView View(const consul::KvListResult& listed) const;
  std::optional<AcquireResult> Act(const consul::KvListResult& listed, consul::Canceller* attempt);
  std::optional<AcquireResult> RunTake(const Take& take, const TreeView& view,
                                       consul::Canceller* attempt);

  const std::string& prefix_;
  absl::BitGen gen_;
  std::string session_;      // the session of the entry; "" before the first attempt
  std::string name_;         // this call's entry name: "<session>.<16 hex>"
  std::string entry_;        // its key
  uint64_t wait_index_ = 0;  // not 0: wait for the tree to pass this index
  std::set<std::string> skipped_;
};

// The tier 2 of a record lock, but for Acquire: consul_key() is the record, and a hold (and
// what an acquire left pending) ends with its entry's delete.
class RecordLock : public RemoteLock {
 public:
  // `noun` and `name` name the lock in errors; `core` must outlive it.
  RecordLock(LockCore& core, std::string noun, std::string name, std::string prefix);

  const std::string& consul_key() const override { return prefix_; }
  absl::Status Release(const RemoteHold& hold) override;
  // `pending.entry` is the entry of a txn whose answer was lost.
  void ReleasePending(const PendingRelease& pending) override;
  void ForgetLostHold(const RemoteHold& hold) override;

 protected:
  LockCore& core_;
  const std::string noun_;
  const std::string name_;
  const std::string prefix_;
};

}  // namespace registry::lock

#endif  // LOCK_RECORD_LOCK_H_
