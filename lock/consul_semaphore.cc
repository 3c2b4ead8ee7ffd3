// lock/consul_semaphore.cc
//
// The semaphore's rounds: read the tree, take a place (pruning dead holders when their places
// are needed) or wait on the tree's index; the release deletes the entry.
#include "lock/consul_semaphore.h"

#include <algorithm>
#include <optional>
#include <set>
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
#include "nlohmann/json.hpp"

namespace registry::lock {
namespace {

// A take txn holds: the entry's lock, two ops per pruned holder, the record's check-and-set.
// Consul 1.8 allows 64 ops per txn.
constexpr size_t kMaxPrunesPerTxn = 31;

// The tree of a semaphore as one listing shows it.
struct SemaphoreView {
  std::optional<consul::DirEntry> record;  // the record key, if it exists
  SemaphoreRecord parsed;                  // its content (limit 0 when absent)
  std::set<std::string> entries;           // names of entries bound to a session
  std::optional<consul::DirEntry> own;     // the caller's entry, if listed
};

// One ConsulSemaphore::Acquire call.
class SemaphoreAcquisition final : public AcquireLoop {
 public:
  SemaphoreAcquisition(LockCore& core, const std::string& name, const std::string& prefix,
                       int limit, absl::Time deadline, absl::Time request_deadline,
                       absl::string_view op, std::string* pending_release)
      : AcquireLoop(core, name, deadline, request_deadline, op, pending_release, "semaphore"),
        prefix_(prefix),
        limit_(limit) {}

 private:
  std::optional<AcquireResult> Round(absl::Time now) override {
    if (wait_index_ != 0) return Wait(now);
    consul::Canceller attempt(call(), AttemptDeadline(now));
    std::optional<AcquireResult> round;
    const std::string session = SessionForAttempt(&round);
    if (session.empty()) return round;
    if (session != session_) {  // a new entry for a new session; the old one went with its session
      session_ = session;
      name_ =
          absl::StrCat(session, ".", absl::Hex(absl::Uniform<uint64_t>(gen_), absl::kZeroPad16));
      entry_ = absl::StrCat(prefix_, name_, "/");
    }
    absl::StatusOr<consul::KvListResult> listed =
        core().client().KvList(prefix_, consul::ConsistentRead(), &attempt);
    if (!listed.ok()) return RetryAfter(listed.status());
    Reached();
    return Decide(*listed, &attempt);
  }

  // Blocks on the tree until it changes or the time is up, then decides on what it shows.
  std::optional<AcquireResult> Wait(absl::Time now) {
    absl::StatusOr<consul::KvListResult> listed = BlockingList(prefix_, wait_index_, now);
    if (!listed.ok()) return RetryAfter(listed.status());
    Reached();
    wait_index_ = 0;
    consul::Canceller attempt(call(), AttemptDeadline(absl::Now()));
    return Decide(*listed, &attempt);
  }

  absl::StatusOr<SemaphoreView> View(const consul::KvListResult& listed) const {
    SemaphoreView view;
    for (const consul::DirEntry& entry : listed.entries) {
      if (entry.key == prefix_) {
        view.record = entry;
        continue;
      }
      absl::string_view rest = entry.key;
      if (!absl::ConsumePrefix(&rest, prefix_) || !absl::ConsumeSuffix(&rest, "/") ||
          rest.empty() || absl::StrContains(rest, '/') || entry.session.empty()) {
        continue;  // not exactly one segment below, or not bound: no holder's entry
      }
      view.entries.insert(std::string(rest));
      if (entry.key == entry_) view.own = entry;
    }
    if (view.record.has_value()) {
      absl::StatusOr<SemaphoreRecord> parsed = ParseSemaphoreRecord(view.record->value);
      if (!parsed.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat("the holders record '", prefix_,
                         "' is not a semaphore's: ", parsed.status().message()));
      }
      view.parsed = *std::move(parsed);
    }
    return view;
  }

  std::optional<AcquireResult> Decide(const consul::KvListResult& listed,
                                      consul::Canceller* attempt) {
    absl::StatusOr<SemaphoreView> view = View(listed);
    if (!view.ok()) return AcquireResult(Prefixed(view.status()));
    const std::vector<std::string>& holders = view->parsed.holders;
    // Taken by an earlier txn of this call whose answer was lost.
    if (view->own.has_value() && view->own->session == session_ &&
        std::binary_search(holders.begin(), holders.end(), name_)) {
      return AcquireResult(RemoteHold{session_, entry_, view->own->modify_index});
    }
    std::vector<std::string> alive;
    std::vector<std::string> dead;
    for (const std::string& holder : holders) {
      (view->entries.contains(holder) ? alive : dead).push_back(holder);
    }
    if (view->record.has_value() && view->parsed.limit != limit_ && !alive.empty()) {
      return AcquireResult(Prefixed(absl::FailedPreconditionError(
          absl::StrCat("its limit in Consul is ", view->parsed.limit, " (record '", prefix_,
                       "', held by ", alive.size(), "), this call asked for ", limit_))));
    }
    if (alive.size() >= static_cast<size_t>(limit_)) {
      wait_index_ = std::max<uint64_t>(listed.meta.index, 1);
      return std::nullopt;
    }
    return Take(*view, alive, dead, attempt);
  }

  // One txn: prune as many dead holders as the caller's place needs (at most a txn's worth),
  // then, if that is enough, lock the entry and add it to the record.
  std::optional<AcquireResult> Take(const SemaphoreView& view,
                                    const std::vector<std::string>& alive,
                                    std::vector<std::string> dead, consul::Canceller* attempt) {
    const size_t places = alive.size() + dead.size() + 1;  // with the caller's
    const size_t needed = places > static_cast<size_t>(limit_) ? places - limit_ : 0;
    const size_t prunes = std::min(needed, kMaxPrunesPerTxn);
    const bool take = prunes == needed;
    std::vector<consul::TxnOp> ops;
    if (take) ops.push_back(consul::TxnOp::Lock(entry_, core().options().holder_value, session_));
    SemaphoreRecord record{limit_, alive};
    for (size_t i = 0; i < dead.size(); ++i) {
      if (i < prunes) {
        // Refused while the dead holder's key is under lock-delay: it may not know yet.
        const std::string key = absl::StrCat(prefix_, dead[i], "/");
        ops.push_back(consul::TxnOp::Lock(key, "", session_));
        ops.push_back(consul::TxnOp::Delete(key));
      } else {
        record.holders.push_back(dead[i]);
      }
    }
    if (take) record.holders.push_back(name_);
    std::sort(record.holders.begin(), record.holders.end());
    const size_t cas_op = ops.size();
    ops.push_back(consul::TxnOp::Cas(prefix_, SemaphoreRecordJson(record),
                                     view.record.has_value() ? view.record->modify_index : 0));
    absl::StatusOr<consul::TxnResult> taken = core().client().Txn(ops, attempt);
    if (SessionRefused(taken, session_)) return AfterSessionRefused(session_);
    if (!taken.ok()) {
      const absl::Status& error = taken.status();
      if (take && !absl::IsCancelled(error) && !consul::IsNotSent(error)) {
        set_pending_release(entry_);
      }
      return RetryAfter(error);
    }
    Reached();
    if (taken->committed) {
      if (!take) return std::nullopt;  // pruned a txn's worth: read again and go on
      return AcquireResult(RemoteHold{session_, entry_, taken->results[0].modify_index});
    }
    if (absl::Now() >= deadline()) return AcquireResult(std::optional<RemoteHold>());
    for (const consul::TxnError& error : taken->errors) {
      if (error.op_index == cas_op) return std::nullopt;  // the record changed: read again
    }
    if (consul::TxnErrorSays(*taken, "lock delay")) {
      return PauseUntil(absl::Now() + core().lock_retry());  // a dead holder may not know yet
    }
    return AcquireResult(Prefixed(absl::AbortedError(
        absl::StrCat("taking a place refused: ",
                     taken->errors.empty() ? "no reason given" : taken->errors[0].what))));
  }

  const std::string& prefix_;
  const int limit_;
  absl::BitGen gen_;
  std::string session_;      // the session of entry_; "" before the first attempt
  std::string name_;         // this call's entry name: "<session>.<16 hex>"
  std::string entry_;        // its key
  uint64_t wait_index_ = 0;  // not 0: wait for the tree to pass this index
};

}  // namespace

absl::StatusOr<SemaphoreRecord> ParseSemaphoreRecord(absl::string_view json) {
  const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return absl::InvalidArgumentError("not a JSON object");
  const auto limit = parsed.find("Limit");
  if (limit == parsed.end() || !limit->is_number_integer() || *limit < 1 ||
      *limit > kMaxSemaphoreLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"Limit\" is not a number from 1 to ", kMaxSemaphoreLimit));
  }
  SemaphoreRecord record;
  record.limit = limit->get<int>();
  const auto holders = parsed.find("Holders");
  if (holders != parsed.end() && !holders->is_null()) {
    if (!holders->is_object()) return absl::InvalidArgumentError("\"Holders\" is not an object");
    for (const auto& [holder, flag] : holders->items()) record.holders.push_back(holder);
  }
  std::sort(record.holders.begin(), record.holders.end());
  return record;
}

std::string SemaphoreRecordJson(const SemaphoreRecord& record) {
  nlohmann::json holders = nlohmann::json::object();
  for (const std::string& holder : record.holders) holders[holder] = true;
  return nlohmann::json{{"Limit", record.limit}, {"Holders", std::move(holders)}}.dump();
}

ConsulSemaphore::ConsulSemaphore(LockCore& core, std::string name, std::string prefix, int limit)
    : core_(core), name_(std::move(name)), prefix_(std::move(prefix)), limit_(limit) {}

absl::StatusOr<std::optional<RemoteHold>> ConsulSemaphore::Acquire(absl::Time deadline,
                                                                   absl::Time request_deadline,
                                                                   absl::string_view op,
                                                                   std::string* pending_release) {
  return SemaphoreAcquisition(core_, name_, prefix_, limit_, deadline, request_deadline, op,
                              pending_release)
      .Run();
}

absl::Status ConsulSemaphore::DeleteEntry(const std::string& entry) {
  const consul::TxnOp remove[] = {consul::TxnOp::Delete(entry)};
  return core_.client().Txn(remove, core_.canceller()).status();
}

absl::Status ConsulSemaphore::Release(const RemoteHold& hold) {
  // The entry belongs to this hold only, so its delete needs no fence, and a resent one is
  // harmless. The record keeps the name until a taker needs the place.
  return ReleaseWithRetries(
      core_,
      [&]() -> absl::StatusOr<bool> {
        RETURN_IF_ERROR(DeleteEntry(hold.key));
        return true;
      },
      [&](const absl::Status& error) {
        return Prefixed(absl::StrCat("Unlock: semaphore '", name_, "'"), error);
      });
}

void ConsulSemaphore::ReleasePending(const std::string& pending) {
  // A take cut by the deadline may still be applied after the first delete, hence a second one.
  // Best effort: an entry left behind goes with the session.
  if (!pending.empty() && DeleteEntry(pending).ok()) DeleteEntry(pending).IgnoreError();
}

void ConsulSemaphore::ForgetLostHold(const RemoteHold& hold) {
  DeleteEntry(hold.key).IgnoreError();
}

}  // namespace registry::lock
