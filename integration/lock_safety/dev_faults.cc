// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/dev_faults.cc
#include "integration/lock_safety/dev_faults.h"

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "integration/testing/dev_control.h"

namespace registry::integration {
namespace {

// Pause between two faults, and how long a latency fault lasts.
const absl::Duration kFaultPeriod = absl::Milliseconds(600);
const absl::Duration kLatencySpell = absl::Milliseconds(300);
const absl::Duration kExpireAfter = absl::Milliseconds(250);  // into a long section

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

// The section running now according to the log at `path` (the latest "start" without "end" or
// "term"): its tag and start time.
std::optional<std::pair<std::string, int64_t>> RunningSection(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, int64_t> open;  // tag -> start
  std::string event, tag, rest;
  int64_t ns = 0;
  while (in >> event >> ns >> tag) {
    std::getline(in, rest);
    if (event == "start") open[tag] = ns;
    if (event == "end" || event == "term") open.erase(tag);
  }
  std::optional<std::pair<std::string, int64_t>> latest;
  for (const auto& [t, start] : open) {
    if (!latest.has_value() || start > latest->second) latest.emplace(t, start);
  }
  return latest;
}

// Waits (at most 5 s) until a long section has run for kExpireAfter, then expires the session
// holding the lock. Returns true iff a session was expired.
bool ExpireALongHolder(const std::string& address, const std::string& log,
                       const std::function<std::string()>& holder_session,
                       absl::Notification& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (absl::Now() < deadline) {
    std::optional<std::pair<std::string, int64_t>> running = RunningSection(log);
    if (running.has_value() &&
        (absl::EndsWith(running->first, "L") || absl::EndsWith(running->first, "W")) &&
        NowNs() - running->second >= absl::ToInt64Nanoseconds(kExpireAfter)) {
      const std::string session = holder_session();
      return !session.empty() && DevControl(address, "/v1/_dev/session/expire/" + session).ok();
    }
    // Polls the log: the fault schedule is paced, no result depends on this interval.
    if (done.WaitForNotificationWithTimeout(absl::Milliseconds(20))) return false;
  }
  return false;
}

}  // namespace

// Injects one fault per kFaultPeriod, in rotation, until `done` is notified.
FaultCounts InjectFaults(const std::string& address, const std::string& log,
                         const std::function<std::string()>& holder_session,
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
        if (ExpireALongHolder(address, log, holder_session, done)) ++counts.expiries;
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

}  // namespace registry::integration
