// SPDX-License-Identifier: Apache-2.0
// integration/partition/partition_heal_check.cc
//
// PartitionTest::HealAndCheck and the checks it makes (partition_fixture.h).
#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "integration/history/history_check.h"
#include "integration/lock_safety/section_history.h"
#include "integration/partition/partition_fixture.h"

namespace registry::partition {
namespace {

using integration::Section;

// A rejoin slower than this keeps the servers' logs for a look.
constexpr absl::Duration kSlowRejoin = absl::Seconds(15);
// A run that began this soon after the cluster was whole again may still fail for the fault (see
// partition_checks.h): its first calls may have met the servers settling.
constexpr absl::Duration kGrace = kRequestTimeout;

// One line per section, in start order, times relative to `zero`: for a failure message.
std::string Timeline(std::vector<Section> sections, absl::Time zero) {
  std::sort(sections.begin(), sections.end(), [](const Section& a, const Section& b) {
    return a.start.value_or(0) < b.start.value_or(0);
  });
  auto at = [zero](std::optional<int64_t> ns) {
    return ns.has_value() ? absl::StrCat(absl::ToInt64Milliseconds(absl::FromUnixNanos(*ns) - zero))
                          : std::string("-");
  };
  auto value = [](std::optional<int64_t> v) {
    return v.has_value() ? absl::StrCat("=", *v) : std::string();
  };
  std::string text;
  for (const Section& s : sections) {
    absl::StrAppend(&text, "  ", s.tag, ": ", at(s.start), " ", value(s.read_value), " ",
                    value(s.put_value), " ", value(s.wrote_value), " ", at(s.stop_ns()), "; exit ",
                    s.exit_code, "\n");
  }
  return text;
}

}  // namespace

std::vector<FencedAttempt> PartitionTest::CheckFencedCounter() {
  std::vector<FencedAttempt> attempts;
  for (auto& [node, writer] : fenced_) {
    writer->Stop();
    std::vector<FencedAttempt> of_node = writer->Attempts();
    attempts.insert(attempts.end(), of_node.begin(), of_node.end());
  }
  absl::StatusOr<std::map<std::string, std::string>> fenced = ConsistentRead("/fenced");
  int64_t counter = -1;
  EXPECT_TRUE(fenced.ok() && absl::SimpleAtoi((*fenced)[kFencedCounterKey], &counter))
      << "cannot read the fenced counter: " << fenced.status();
  const FencedFigures figures = partition::CheckFencedCounter(attempts, counter);
  EXPECT_THAT(figures.errors, ::testing::IsEmpty());
  std::printf("  fenced counter %lld: %d writes acknowledged, %d refused, %d of unknown outcome\n",
              static_cast<long long>(counter), figures.acknowledged, figures.refused,
              figures.unknown);
  ::testing::Test::RecordProperty("fenced_refused", figures.refused);
  for (auto& [node, writer] : fenced_) {
    EXPECT_EQ(writer->unrecorded(), 0) << lab_->name(node) << ": lines its history lost";
  }
  return attempts;
}

void PartitionTest::CheckHistory(const std::vector<Section>& sections) {
  const absl::Status recorded =
      integration::RecordSections(sections,
                                  {.lock = LockWorkersOptions().lock_name,
                                   .realtime_to_monotonic_ns = realtime_to_monotonic_ns_},
                                  history_dir_);
  EXPECT_TRUE(recorded.ok()) << recorded;
  history::ExpectHistoryChecked(history_dir_);
}

void PartitionTest::CheckEphemeralKeysBack() {
  std::vector<std::string> expected = {"/online/app"};
  for (int node : kWorkers) expected.push_back(absl::StrCat("/online/", lab_->name(node)));
  const absl::Time start = absl::Now();
  std::string missing;
  while (absl::Now() - start < kRecovery) {
    absl::StatusOr<std::map<std::string, std::string>> held = ConsistentRead("/online", true);
    missing = held.ok() ? "" : std::string(held.status().message());
    for (const std::string& key : expected) {
      if (held.ok() && held->count(key) == 0) absl::StrAppend(&missing, key, " ");
    }
    if (missing.empty()) break;
    absl::SleepFor(kPoll);
  }
  EXPECT_EQ(missing, "") << "ephemeral keys not back (held by a session) after "
                         << absl::FormatDuration(kRecovery);
  std::printf("  ephemeral keys of the %zu live instances back %s after the check began\n",
              expected.size(), Ms(absl::Now() - start).c_str());
}

void PartitionTest::CheckWatchConverged() {
  const absl::Time start = absl::Now();
  std::string difference = "never compared";
  while (absl::Now() - start < kRecovery) {
    absl::StatusOr<std::map<std::string, std::string>> store = ConsistentRead("/online");
    absl::StatusOr<std::map<std::string, std::string>> safety = ConsistentRead("/safety");
    if (store.ok() && safety.ok()) {
      store->insert(safety->begin(), safety->end());
      const std::map<std::string, std::string> view = app_->View();
      if (view == *store) break;
      difference =
          absl::StrCat("watch view {", absl::StrJoin(view, ", ", absl::PairFormatter("=")),
                       "} vs store {", absl::StrJoin(*store, ", ", absl::PairFormatter("=")), "}");
    } else {
      difference = absl::StrCat(store.status().ToString(), " ", safety.status().ToString());
    }
    absl::SleepFor(kPoll);
  }
  EXPECT_LT(absl::Now() - start, kRecovery) << "the watch never converged: " << difference;
  std::printf("  watch view equal to a consistent read %s after the check began\n",
              Ms(absl::Now() - start).c_str());
}

void PartitionTest::AwaitCutAgentsBack(FaultRecord& fault) {
  fault.cut_back = fault.healed;
  if (agents_ == nullptr) return;  // the instances reach the servers as soon as the network does
  std::vector<std::string> figures;
  for (int node : fault.cut) {
    if (!agents_->has(node)) continue;
    const absl::Status alive = agents_->AwaitAlive(node, kRecovery);
    EXPECT_TRUE(alive.ok()) << alive;
    fault.cut_back = std::max(fault.cut_back, absl::Now());
    figures.push_back(absl::StrCat(lab_->name(node), " ", Ms(absl::Now() - fault.healed)));
  }
  if (!figures.empty()) {
    std::printf("  agents of the cut nodes alive in serf again after the heal: %s\n",
                absl::StrJoin(figures, ", ").c_str());
  }
}

void PartitionTest::CheckInstances(const FaultRecord& fault) {
  std::vector<std::string> states;
  bool lost = false;
  for (const auto& [when, state] : app_->States()) {
    states.push_back(absl::StrCat(ConnectionStateName(state), "@", Ms(when - fault.began)));
    lost = lost || state == ConnectionState::kLost;
  }
  if (fault.cut.count(kApp) == 0 && !fault.sessions_at_risk) {
    EXPECT_FALSE(lost) << "the app instance was not cut off but lost its session: "
                       << absl::StrJoin(states, " ");
  }
  std::printf("  app instance states (time from the fault): %s\n",
              states.empty() ? "none" : absl::StrJoin(states, " ").c_str());
  for (size_t i = 0; i < ephemerals_.size(); ++i) {
    EXPECT_EQ(ephemerals_[i]->Wait(absl::Now()), std::nullopt)
        << "registryctl ephemeral on " << lab_->name(kWorkers[i])
        << " exited: " << ephemerals_[i]->err();
  }
}

PartitionTest::Outcome PartitionTest::HealAndCheck(FaultRecord& fault) {
  Outcome outcome;
  const absl::Status healed = lab_->HealAll();
  if (fault.healed == absl::Time()) fault.healed = absl::Now();
  EXPECT_TRUE(healed.ok()) << healed;
  std::printf("partition fault [%s] '%s': held %s; the majority had no leader for %s%s\n",
              topology_ == Topology::kClientAgents ? "client agents" : "servers",
              fault.name.c_str(), Ms(fault.healed - fault.began).c_str(),
              Ms(fault.leaderless).c_str(),
              fault.sessions_at_risk ? " (sessions at risk everywhere)" : "");
  std::string waited_for;
  absl::StatusOr<int> leader = consul_->AwaitWhole(kRecovery, &waited_for);
  EXPECT_TRUE(leader.ok()) << leader.status();
  // A server that was cut off from the leader comes back campaigning with a higher term, and
  // Consul 1.8.7's Raft has no pre-vote: the leader steps down and the cluster elects again,
  // which may cost sessions as any slow election does.
  const absl::Duration rejoin = absl::Now() - fault.healed;
  const bool rejoin_risk = LeaderlessPutsSessionsAtRisk(rejoin, kTtl, kRenewRetry);
  fault.sessions_at_risk = fault.sessions_at_risk || rejoin_risk;
  std::printf("  cluster whole again %s after the heal%s%s%s\n", Ms(rejoin).c_str(),
              rejoin_risk ? " (an election: sessions at risk everywhere)" : "",
              waited_for.empty() ? "" : "; last waited for: ", waited_for.c_str());
  if (rejoin > kSlowRejoin) consul_->KeepFilesAndPrintLogs();  // seen: 31 s and 42 s
  AwaitCutAgentsBack(fault);
  const std::vector<int> workers(std::begin(kWorkers), std::end(kWorkers));
  EXPECT_TRUE(workers_->AwaitSuccessEverywhere(workers, fault.healed, kRecovery))
      << "some lock node never got the lock again after the heal";
  std::printf("  every lock node held the lock again %s after the heal\n",
              Ms(absl::Now() - fault.healed).c_str());
  workers_->Stop();
  outcome.fenced = CheckFencedCounter();

  absl::StatusOr<std::vector<Section>> sections = workers_->Sections();
  EXPECT_TRUE(sections.ok()) << sections.status();
  if (sections.ok()) outcome.sections = *std::move(sections);
  CheckHistory(outcome.sections);
  outcome.runs = workers_->Iterations();
  absl::StatusOr<std::map<std::string, std::string>> safety = ConsistentRead("/safety");
  int64_t counter = -1;
  EXPECT_TRUE(safety.ok() && absl::SimpleAtoi((*safety)["/safety/counter"], &counter))
      << "cannot read the counter: " << safety.status();
  const ExclusionFigures figures = CheckExclusion(outcome.sections, counter);
  EXPECT_THAT(figures.errors, ::testing::IsEmpty())
      << "writes of unknown outcome: " << absl::StrJoin(figures.unknown_outcomes, "; ")
      << "\nsections (ms from the fault: start, read, put, wrote, stop; exit):\n"
      << Timeline(outcome.sections, fault.began);

  int ok = 0, lost = 0, false_losses = 0, failed = 0;
  for (const Iteration& run : outcome.runs) {
    ok += run.exit_code == 0;
    lost += run.exit_code == integration::kExitLockLost;
    false_losses += run.exit_code == integration::kExitLockLost && fault.cut.count(run.node) == 0;
    failed += run.exit_code != 0 && run.exit_code != integration::kExitLockLost;
  }
  const std::vector<std::string> unexpected =
      UnexpectedFailures(outcome.runs, fault, rejoin + kGrace);
  EXPECT_THAT(unexpected, ::testing::IsEmpty());
  if (figures.late_writes > 0) {
    std::printf("  WARNING: %d unfenced writes landed late and undid %lld increments: %s; %s\n",
                figures.late_writes, static_cast<long long>(figures.undone_increments),
                absl::StrJoin(figures.late, "; ").c_str(),
                absl::StrJoin(figures.unknown_outcomes, "; ").c_str());
  }
  std::printf(
      "  %d sections, %d overlaps (%d forbidden, longest %.1f ms), worst gap %.0f ms; counter %lld "
      "(%d writes + %d of unknown outcome); lock runs: %d ok, %d lost (%d of them not cut off), %d "
      "failed otherwise, %zu unexpected\n",
      figures.sections, figures.overlaps, figures.forbidden_overlaps, figures.max_overlap_ms,
      figures.worst_gap_ms, static_cast<long long>(counter), figures.writes, figures.unknown_writes,
      ok, lost, false_losses, failed, unexpected.size());
  if (!fault.holder_tag.empty()) {
    outcome.handover = HolderHandover(outcome.sections, fault.holder_tag);
    const Handover& h = outcome.handover;
    std::printf("  cut-off holder %s: %s\n", h.holder.c_str(),
                !h.margin.has_value() ? "no section began after it"
                                      : absl::StrCat("stopped ", Ms(*h.margin), " before ", *h.next,
                                                     " began (negative: they overlapped)")
                                            .c_str());
    ::testing::Test::RecordProperty(
        "holder_margin_ms", h.margin.has_value() ? absl::ToInt64Milliseconds(*h.margin) : 0);
  }
  ::testing::Test::RecordProperty("sections", figures.sections);
  ::testing::Test::RecordProperty("forbidden_overlaps", figures.forbidden_overlaps);
  ::testing::Test::RecordProperty("worst_gap_ms", static_cast<int>(figures.worst_gap_ms));
  ::testing::Test::RecordProperty("late_writes", figures.late_writes);
  CheckEphemeralKeysBack();
  CheckWatchConverged();
  CheckInstances(fault);
  std::fflush(stdout);
  return outcome;
}

}  // namespace registry::partition
