// SPDX-License-Identifier: Apache-2.0
// lock/consul_semaphore.cc
//
// The semaphore's decision on its tree (record_lock.h does the rounds): hold, wait while
// `limit` holders are alive, or take a place, pruning as many dead holders as the place needs.
#include "lock/consul_semaphore.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lock/record_lock.h"
#include "nlohmann/json.hpp"

namespace registry::lock {
namespace {

// One ConsulSemaphore::Acquire call.
class SemaphoreAcquisition final : public RecordAcquisition {
 public:
  SemaphoreAcquisition(LockCore& core, const std::string& name, const std::string& prefix,
                       int limit, absl::Time deadline, absl::Time request_deadline,
                       absl::string_view op, PendingRelease* pending_release)
      : RecordAcquisition(core, name, prefix, deadline, request_deadline, op, pending_release,
                          "semaphore"),
        prefix_(prefix),
        limit_(limit) {}

 private:
  Decision Decide(const TreeView& view) override {
    SemaphoreRecord record;
    if (view.record.has_value()) {
      absl::StatusOr<SemaphoreRecord> parsed = ParseSemaphoreRecord(view.record->value);
      if (!parsed.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat("the holders record '", prefix_,
                         "' is not a semaphore's: ", parsed.status().message()));
      }
      record = *std::move(parsed);
    }
    const std::vector<std::string>& holders = record.holders;
    if (EntryListed(view) && std::binary_search(holders.begin(), holders.end(), entry_name())) {
      return AlreadyHeld();  // taken by an earlier txn of this call whose answer was lost
    }
    std::vector<std::string> alive;
    std::vector<std::string> dead;
    for (const std::string& holder : holders) {
      (view.entries.contains(holder) ? alive : dead).push_back(holder);
    }
    if (view.record.has_value() && record.limit != limit_ && !alive.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("its limit in Consul is ", record.limit, " (record '", prefix_,
                       "', held by ", alive.size(), "), this call asked for ", limit_));
    }
    if (alive.size() >= static_cast<size_t>(limit_)) return WaitForChange();
    // Prune as many dead holders as the caller's place needs, at most a txn's worth; if that
    // is not enough, prune only, and read again.
    const size_t places = alive.size() + dead.size() + 1;  // with the caller's
    const size_t needed = places > static_cast<size_t>(limit_) ? places - limit_ : 0;
    Take take;
    const size_t prunes = std::min(needed, kMaxPrunesPerTxn);
    take.lock_entry = take.holds = prunes == needed;
    SemaphoreRecord next{limit_, alive};
    for (size_t i = 0; i < dead.size(); ++i) {
      if (i < prunes) {
        take.prunes.push_back({dead[i], /*required=*/true});
      } else {
        next.holders.push_back(dead[i]);
      }
    }
    if (take.holds) next.holders.push_back(entry_name());
    std::sort(next.holders.begin(), next.holders.end());
    take.record = SemaphoreRecordJson(next);
    return take;
  }

  const std::string& prefix_;
  const int limit_;
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
    : RecordLock(core, "semaphore", std::move(name), std::move(prefix)), limit_(limit) {}

absl::StatusOr<std::optional<RemoteHold>> ConsulSemaphore::Acquire(
    absl::Time deadline, absl::Time request_deadline, absl::string_view op,
    PendingRelease* pending_release) {
  return SemaphoreAcquisition(core_, name_, prefix_, limit_, deadline, request_deadline, op,
                              pending_release)
      .Run();
}

}  // namespace registry::lock
