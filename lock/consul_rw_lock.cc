// SPDX-License-Identifier: Apache-2.0
// lock/consul_rw_lock.cc
//
// The read/write lock's decisions on its tree (record_lock.h does the rounds).
#include "lock/consul_rw_lock.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace registry::lock {
namespace {

// Dead readers a reader's take tidies away besides its own work (readers never need them
// gone; writers prune all of them).
constexpr size_t kReaderTidying = 2;

// One ConsulRwLock::Acquire call.
class RwAcquisition final : public RecordAcquisition {
 public:
  RwAcquisition(LockCore& core, const std::string& name, const std::string& prefix, bool write,
                absl::Time deadline, absl::Time request_deadline, absl::string_view op,
                PendingRelease* pending_release)
      : RecordAcquisition(core, name, prefix, deadline, request_deadline, op, pending_release,
                          write ? "write lock" : "read lock"),
        prefix_(prefix),
        write_(write) {}

 private:
  Decision Decide(const TreeView& view) override {
    RwRecord record;
    if (view.record.has_value()) {
      absl::StatusOr<RwRecord> parsed = ParseRwRecord(view.record->value);
      if (!parsed.ok()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the record '", prefix_, "' is not a read/write lock's: ", parsed.status().message()));
      }
      record = *std::move(parsed);
    }
    return write_ ? DecideWrite(view, record) : DecideRead(view, record);
  }

  Decision DecideRead(const TreeView& view, const RwRecord& record) {
    const std::vector<std::string>& readers = record.readers;
    if (EntryListed(view) && std::binary_search(readers.begin(), readers.end(), entry_name())) {
      return AlreadyHeld();  // taken by an earlier txn of this call whose answer was lost
    }
    const std::vector<std::string> waiting = Alive(view, record.waiting);
    if (Alive(view, record.writer) || !waiting.empty()) return WaitForChange();
    Take take;
    RwRecord next{"", {}, waiting};
    if (!record.writer.empty()) take.prunes.push_back({record.writer, /*required=*/true});
    size_t tidied = 0;
    for (const std::string& reader : readers) {
      const bool tidy =
          !view.entries.contains(reader) && !skipped().contains(reader) && tidied < kReaderTidying;
      if (tidy) {
        ++tidied;
        take.prunes.push_back({reader, /*required=*/false});
      } else {
        next.readers.push_back(reader);
      }
    }
    next.readers.push_back(entry_name());
    std::sort(next.readers.begin(), next.readers.end());
    take.record = RwRecordJson(next);
    return take;
  }

  Decision DecideWrite(const TreeView& view, const RwRecord& record) {
    if (EntryListed(view) && record.writer == entry_name()) return AlreadyHeld();
    const std::vector<std::string> waiting = Alive(view, record.waiting);
    const auto me = std::find(waiting.begin(), waiting.end(), entry_name());
    const bool registered = me != waiting.end();
    const bool ahead = waiting.begin() != me;  // a live writer registered before this call
    const bool held = Alive(view, record.writer) || !Alive(view, record.readers).empty();
    if (held || ahead) {
      if (registered) return WaitForChange();
      Take registration;  // holds back readers that come after it
      registration.holds = false;
      RwRecord next = record;
      next.waiting = waiting;
      next.waiting.push_back(entry_name());
      registration.record = RwRecordJson(next);
      return registration;
    }
    // Nobody alive holds it: prune every dead holder (a txn's worth at a time), then take it.
    Take take;
    RwRecord next;
    std::vector<std::string> dead = record.readers;
    if (!record.writer.empty()) dead.push_back(record.writer);
    for (const std::string& holder : dead) {
      if (take.prunes.size() < kMaxPrunesPerTxn) {
        take.prunes.push_back({holder, /*required=*/true});
      } else {
        next.readers.push_back(holder);  // the next round prunes it
      }
    }
    take.holds = next.readers.empty();
    take.lock_entry = take.holds || registered;
    for (const std::string& writer : waiting) {
      if (writer != entry_name() || !take.holds) next.waiting.push_back(writer);
    }
    if (take.holds) next.writer = entry_name();
    take.record = RwRecordJson(next);
    return take;
  }

  static bool Alive(const TreeView& view, const std::string& name) {
    return !name.empty() && view.entries.contains(name);
  }
  static std::vector<std::string> Alive(const TreeView& view,
                                        const std::vector<std::string>& names) {
    std::vector<std::string> alive;
    for (const std::string& name : names) {
      if (Alive(view, name)) alive.push_back(name);
    }
    return alive;
  }

  const std::string& prefix_;
  const bool write_;
};

}  // namespace

absl::StatusOr<RwRecord> ParseRwRecord(absl::string_view json) {
  const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return absl::InvalidArgumentError("not a JSON object");
  RwRecord record;
  if (const auto writer = parsed.find("Writer"); writer != parsed.end() && !writer->is_null()) {
    if (!writer->is_string()) return absl::InvalidArgumentError("\"Writer\" is not a string");
    record.writer = writer->get<std::string>();
  }
  if (const auto readers = parsed.find("Readers"); readers != parsed.end() && !readers->is_null()) {
    if (!readers->is_object()) return absl::InvalidArgumentError("\"Readers\" is not an object");
    for (const auto& [reader, flag] : readers->items()) record.readers.push_back(reader);
  }
  if (const auto waiting = parsed.find("Waiting"); waiting != parsed.end() && !waiting->is_null()) {
    if (!waiting->is_array()) return absl::InvalidArgumentError("\"Waiting\" is not an array");
    for (const nlohmann::json& writer : *waiting) {
      if (!writer.is_string()) return absl::InvalidArgumentError("\"Waiting\" holds a non-string");
      record.waiting.push_back(writer.get<std::string>());
    }
  }
  std::sort(record.readers.begin(), record.readers.end());
  return record;
}

std::string RwRecordJson(const RwRecord& record) {
  nlohmann::json readers = nlohmann::json::object();
  for (const std::string& reader : record.readers) readers[reader] = true;
  nlohmann::json out = {{"Readers", std::move(readers)}, {"Waiting", record.waiting}};
  if (!record.writer.empty()) out["Writer"] = record.writer;
  return out.dump();
}

ConsulRwLock::ConsulRwLock(LockCore& core, std::string name, std::string prefix, bool write)
    : RecordLock(core, write ? "write lock" : "read lock", std::move(name), std::move(prefix)),
      write_(write) {}

absl::StatusOr<std::optional<RemoteHold>> ConsulRwLock::Acquire(absl::Time deadline,
                                                                absl::Time request_deadline,
                                                                absl::string_view op,
                                                                PendingRelease* pending_release) {
  return RwAcquisition(core_, name_, prefix_, write_, deadline, request_deadline, op,
                       pending_release)
      .Run();
}

}  // namespace registry::lock
