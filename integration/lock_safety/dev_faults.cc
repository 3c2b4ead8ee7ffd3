// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/dev_faults.cc
#include "integration/lock_safety/dev_faults.h"

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"

namespace registry::integration {
namespace {

// Pause between two faults, and how long a latency fault lasts.
const absl::Duration kFaultPeriod = absl::Milliseconds(600);
const absl::Duration kLatencySpell = absl::Milliseconds(300);
const absl::Duration kExpireAfter = absl::Milliseconds(250);  // into a long section

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

// True if the log at `path` shows a long section (its tag ends in "L" or "W") still running (a
// "start" without "end" or "term") that started kExpireAfter ago or earlier. Under a semaphore
// or a read/write lock's readers several sections run at once: any of them counts, not only the
// one that started last, which is mostly a short one.
bool ALongSectionRunsPastExpireAfter(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, int64_t> open;  // tag -> start
  std::string event, tag, rest;
  int64_t ns = 0;
  while (in >> event >> ns >> tag) {
    std::getline(in, rest);
    if (event == "start") open[tag] = ns;
    if (event == "end" || event == "term") open.erase(tag);
  }
  const int64_t started_by = NowNs() - absl::ToInt64Nanoseconds(kExpireAfter);
  for (const auto& [running, start] : open) {
    if ((absl::EndsWith(running, "L") || absl::EndsWith(running, "W")) && start <= started_by) {
      return true;
    }
  }
  return false;
}

// Waits (at most 5 s) until a long section has run for kExpireAfter, then expires the sessions
// holding the lock (the section's among them). Returns true iff a session was expired.
bool ExpireALongHolder(const std::string& address, const std::string& log,
                       const std::function<std::vector<std::string>()>& holder_sessions,
                       absl::Notification& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (absl::Now() < deadline) {
    if (ALongSectionRunsPastExpireAfter(log)) {
      bool expired = false;
      for (const std::string& session : holder_sessions()) {
        // One may have ended meanwhile (the dev server then refuses): the others still count.
        expired |= DevControl(address, "/v1/_dev/session/expire/" + session).ok();
      }
      return expired;
    }
    // Polls the log: the fault schedule is paced, no result depends on this interval.
    if (done.WaitForNotificationWithTimeout(absl::Milliseconds(20))) return false;
  }
  return false;
}

}  // namespace

// Injects one fault per kFaultPeriod, in rotation, until `done` is notified.
FaultCounts InjectFaults(const std::string& address, const std::string& log,
                         const std::function<std::vector<std::string>()>& holder_sessions,
                         absl::Notification& done) {
  FaultCounts counts;
  for (int step = 0; !done.WaitForNotificationWithTimeout(kFaultPeriod); ++step) {
    absl::Status status;
    switch (step % 5) {
      case 0:
        status = DevControl(address, "/v1/_dev/fault/latency?ms=40");
        if (status.ok()) ++counts.latency;
        done.WaitForNotificationWithTimeout(kLatencySpell);
        status.Update(DevControl(address, "/v1/_dev/fault/latency?ms=0"));
        break;
      case 1:
        status = DevControl(address, "/v1/_dev/fault/fail?count=4");
        if (status.ok()) ++counts.fail_bursts;
        break;
      case 2:
        status = DevControl(address, "/v1/_dev/fault/drop?count=3");
        if (status.ok()) ++counts.drops;
        break;
      case 3:
        status = DevControl(address, "/v1/_dev/fault/drop-all");
        if (status.ok()) ++counts.drop_alls;
        break;
      case 4:
        if (ExpireALongHolder(address, log, holder_sessions, done)) ++counts.expiries;
        break;
    }
    EXPECT_TRUE(status.ok()) << status;
  }
  EXPECT_TRUE(DevControl(address, "/v1/_dev/fault/clear").ok());
  return counts;
}

std::string Describe(const FaultCounts& counts) {
  return absl::StrCat(counts.latency, " latency spells, ", counts.fail_bursts, " 500-bursts, ",
                      counts.drops, " drop bursts, ", counts.drop_alls, " drop-alls, ",
                      counts.expiries, " holder sessions expired");
}

std::vector<std::string> LockKeyHolders(const std::string& address, const std::string& lock_key) {
  const std::string session = KeySession(address, lock_key).value_or("");
  return session.empty() ? std::vector<std::string>() : std::vector<std::string>{session};
}

std::vector<std::string> RecordHolders(const std::string& address, const std::string& record_key) {
  absl::StatusOr<HttpReply> reply =
      HttpCall("GET", absl::StrCat("http://", address, "/v1/kv/", record_key, "?raw"));
  if (!reply.ok() || reply->status != 200) return {};
  const nlohmann::json record = nlohmann::json::parse(reply->body, nullptr, false);
  if (!record.is_object()) return {};
  std::vector<std::string> entries;
  for (const char* holders : {"Holders", "Readers"}) {
    if (!record.contains(holders) || !record[holders].is_object()) continue;
    for (const auto& [entry, unused] : record[holders].items()) entries.push_back(entry);
  }
  if (record.contains("Writer") && record["Writer"].is_string()) {
    entries.push_back(record["Writer"].get<std::string>());
  }
  std::vector<std::string> sessions;
  for (const std::string& entry : entries) sessions.push_back(entry.substr(0, entry.find('.')));
  return sessions;
}

}  // namespace registry::integration
