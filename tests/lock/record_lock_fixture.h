// SPDX-License-Identifier: Apache-2.0
// tests/lock/record_lock_fixture.h
//
// The tree of a record lock (lock/record_lock.h: the semaphore, the read/write lock) as the
// mocked transport sees it: its keys, its reads, and the txns that take a place or end a hold.
#ifndef TESTS_LOCK_RECORD_LOCK_FIXTURE_H_
#define TESTS_LOCK_RECORD_LOCK_FIXTURE_H_

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "tests/lock/lock_manager_fixture.h"

namespace registry::lock::testing {

// A key of the tree as Consul lists it, bound to `session` unless "", at `index`.
inline nlohmann::json KeyJson(const std::string& key, const std::string& session, uint64_t index,
                              const std::string& value = "") {
  nlohmann::json entry = {{"LockIndex", 1},   {"Key", key},           {"Flags", 0},
                          {"Value", nullptr}, {"CreateIndex", index}, {"ModifyIndex", index}};
  if (!value.empty()) entry["Value"] = absl::Base64Escape(value);
  if (!session.empty()) entry["Session"] = session;
  return entry;
}
// A read of the tree holding `keys`, at `index`.
inline HttpResponse Tree(std::vector<nlohmann::json> keys, uint64_t index) {
  return ReadResponse(200, nlohmann::json(keys).dump(), index);
}
inline HttpResponse TxnOk() { return Response(200, R"({"Results":[],"Errors":null})"); }
// A txn that locked the entry `key` for "s1": committed, the entry at ModifyIndex 9.
inline HttpResponse EntryLocked(const std::string& key) {
  nlohmann::json results = {{{"KV", KeyJson(key, "s1", 9)}}};
  return Response(200, nlohmann::json({{"Results", results}, {"Errors", nullptr}}).dump());
}
// The record a take wrote: its last op's value.
inline std::string WrittenRecord(const nlohmann::json& ops) {
  std::string written;
  absl::Base64Unescape(ops.back()["KV"]["Value"].get<std::string>(), &written);
  return written;
}

// A consistent read of the tree under `prefix`.
MATCHER_P(IsTreeReadOf, prefix, "") {
  return arg.method == HttpMethod::kGet && arg.path == "/v1/kv/" + std::string(prefix) &&
         arg.FindParam("recurse") != nullptr && arg.FindParam("index") == nullptr;
}
// A blocking read of the tree under `prefix` from `index`.
MATCHER_P2(IsBlockingTreeReadOf, prefix, index, "") {
  const std::string* sent = arg.FindParam("index");
  return arg.method == HttpMethod::kGet && arg.path == "/v1/kv/" + std::string(prefix) &&
         arg.FindParam("recurse") != nullptr && sent != nullptr && *sent == index;
}
// The release: a delete of an entry of session "s1" under `prefix`.
MATCHER_P(IsEntryDeleteUnder, prefix, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 1 && ops[0]["KV"]["Verb"] == "delete" &&
         absl::StartsWith(ops[0]["KV"]["Key"].get<std::string>(), std::string(prefix) + "s1.");
}

}  // namespace registry::lock::testing

#endif  // TESTS_LOCK_RECORD_LOCK_FIXTURE_H_
