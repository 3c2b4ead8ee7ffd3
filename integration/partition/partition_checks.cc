// SPDX-License-Identifier: Apache-2.0
// integration/partition/partition_checks.cc
#include "integration/partition/partition_checks.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace registry::partition {

using integration::FindOverlaps;
using integration::Overlap;
using integration::Section;

namespace {

// The counter check (see the header): section_log.h's CheckCounter replay, which also tells a
// late write from a lost increment. `started` is in start order.
void ReplayCounter(const std::vector<const Section*>& started, const std::vector<Overlap>& overlaps,
                   int64_t final_counter, ExclusionFigures* figures) {
  std::set<std::string> overlapping;
  for (const Overlap& o : overlaps) {
    overlapping.insert(o.earlier);
    overlapping.insert(o.later);
  }
  std::map<int64_t, std::vector<std::string>> sent;  // value -> the sections that sent it so far
  int64_t lo = 0;                                    // the values the counter can hold now
  int64_t hi = 0;
  // A value below [lo, hi] that an earlier section sent: a late write (or not).
  auto late = [&](int64_t value, const std::string& reader) {
    auto senders = sent.find(value);
    if (senders == sent.end() || value > lo) return false;
    ++figures->late_writes;
    figures->undone_increments += lo - value;
    figures->late.push_back(absl::StrCat(reader, " found ", value, " where the sections before it ",
                                         "had left [", lo, ", ", hi, "]: a write of ", value,
                                         " (sent by ", absl::StrJoin(senders->second, ", "),
                                         ") landed late"));
    return true;
  };
  for (const Section* s : started) {
    const bool alone = overlapping.count(s->tag) == 0;
    if (s->read_value.has_value()) {
      const int64_t read = *s->read_value;
      if (alone && (read < lo || read > hi) && !late(read, s->tag)) {
        figures->errors.push_back(absl::StrCat(s->tag, " read ", read,
                                               " but the sections before it can only have left [",
                                               lo, ", ", hi, "]"));
      }
      lo = alone ? read : std::min(lo, read);
      hi = alone ? read : std::max(hi, read);
    }
    if (s->wrote_value.has_value()) {
      ++figures->writes;
      lo = alone ? *s->wrote_value : std::min(lo, *s->wrote_value);
      hi = alone ? *s->wrote_value : std::max(hi, *s->wrote_value);
    } else if (s->put_value.has_value()) {
      ++figures->unknown_writes;  // sent, outcome unknown: the counter is the old or the new value
      hi = std::max(hi, *s->put_value);
    }
    if (s->put_value.has_value()) sent[*s->put_value].push_back(s->tag);
  }
  if (!overlaps.empty()) return;  // overlapping sections may have lost increments: reported
  if ((final_counter < lo || final_counter > hi) && !late(final_counter, "the final read")) {
    figures->errors.push_back(absl::StrCat("the counter is ", final_counter,
                                           " but the sections can only have left [", lo, ", ", hi,
                                           "]"));
  }
  // Every write that landed counts once, less what late writes undid.
  const int64_t least = figures->writes - figures->undone_increments;
  if (final_counter < least || final_counter > least + figures->unknown_writes) {
    figures->errors.push_back(absl::StrCat("the counter is ", final_counter, " after ",
                                           figures->writes, " writes (+", figures->unknown_writes,
                                           " of unknown outcome, -", figures->undone_increments,
                                           " undone by late writes): increments were lost"));
  }
}

}  // namespace

ExclusionFigures CheckExclusion(const std::vector<Section>& sections, int64_t final_counter) {
  ExclusionFigures figures;
  figures.final_counter = final_counter;
  std::vector<const Section*> started;
  for (const Section& s : sections) {
    if (s.start.has_value()) started.push_back(&s);
  }
  std::sort(started.begin(), started.end(),
            [](const Section* a, const Section* b) { return *a->start < *b->start; });
  figures.sections = static_cast<int>(started.size());
  int64_t busy_until = started.empty() ? 0 : started.front()->stop_ns();
  for (const Section* s : started) {
    if (*s->start > busy_until) {
      figures.worst_gap_ms = std::max(figures.worst_gap_ms, (*s->start - busy_until) / 1e6);
    }
    busy_until = std::max(busy_until, s->stop_ns());
  }

  const std::vector<Overlap> overlaps = FindOverlaps(sections);
  figures.overlaps = static_cast<int>(overlaps.size());
  for (const Overlap& o : overlaps) {
    figures.max_overlap_ms = std::max(figures.max_overlap_ms, o.overlap_ns / 1e6);
    if (o.allowed) continue;
    ++figures.forbidden_overlaps;
    figures.errors.push_back(absl::StrFormat(
        "%s and %s held the lock at once for %.3f ms, and %s was not told it had lost it first",
        o.earlier, o.later, o.overlap_ns / 1e6, o.earlier));
  }
  ReplayCounter(started, overlaps, final_counter, &figures);
  if (!figures.errors.empty() || figures.late_writes > 0) {
    for (const Section* s : started) {
      if (!s->put_value.has_value() || s->wrote_value.has_value()) continue;
      figures.unknown_outcomes.push_back(absl::StrFormat(
          "%s (exit %d) sent %d at %d ms after the first section and never learnt the outcome",
          s->tag, s->exit_code, *s->put_value, (*s->start - *started.front()->start) / 1000000));
    }
  }
  return figures;
}

Handover HolderHandover(const std::vector<Section>& sections, const std::string& holder_tag) {
  Handover handover;
  handover.holder = holder_tag;
  const Section* holder = nullptr;
  for (const Section& s : sections) {
    if (s.tag == holder_tag && s.start.has_value()) holder = &s;
  }
  if (holder == nullptr) return handover;
  const Section* next = nullptr;
  for (const Section& s : sections) {
    if (&s == holder || !s.start.has_value() || *s.start < *holder->start) continue;
    if (next == nullptr || *s.start < *next->start) next = &s;
  }
  if (next == nullptr) return handover;
  handover.next = next->tag;
  handover.margin = absl::Nanoseconds(*next->start - holder->stop_ns());
  return handover;
}

bool LeaderlessPutsSessionsAtRisk(absl::Duration leaderless, absl::Duration ttl,
                                  absl::Duration renew_retry) {
  return leaderless >= ttl / 2 - renew_retry;
}

std::vector<std::string> UnexpectedFailures(const std::vector<Iteration>& runs,
                                            const FaultRecord& fault, absl::Duration grace) {
  std::vector<std::string> unexpected;
  for (const Iteration& run : runs) {
    if (run.exit_code == 0) continue;
    const bool known_code = run.exit_code == 1 || run.exit_code == 2 || run.exit_code == 3 ||
                            run.exit_code == 10 || run.exit_code == 11;
    const bool on_cut_node = fault.cut.count(run.node) > 0;
    const absl::Time back = on_cut_node ? std::max(fault.healed, fault.cut_back) : fault.healed;
    const bool during = run.began < back + grace && run.ended > fault.began;
    const bool excused = on_cut_node || fault.sessions_at_risk;
    if (known_code && during && excused) continue;
    unexpected.push_back(absl::StrCat(
        run.tag, " exited ", run.exit_code, " (ran ", absl::FormatDuration(run.began - fault.began),
        " to ", absl::FormatDuration(run.ended - fault.began), " after the fault began, healed at ",
        absl::FormatDuration(fault.healed - fault.began),
        fault.cut.count(run.node) > 0 ? ", on a cut node" : ", on a node not cut off",
        fault.sessions_at_risk ? ", sessions at risk" : "",
        "): ", absl::StripAsciiWhitespace(run.err)));
  }
  return unexpected;
}

}  // namespace registry::partition
