// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/section_log.cc
#include "integration/lock_safety/section_log.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace registry::integration {
namespace {

absl::Status BadLine(absl::string_view line, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("log line '", line, "': ", why));
}

// Stores `value` in `slot` unless it was set already.
absl::Status SetOnce(std::optional<int64_t>* slot, int64_t value, absl::string_view line) {
  if (slot->has_value()) return BadLine(line, "step logged twice");
  *slot = value;
  return absl::OkStatus();
}

std::vector<const Section*> ByStart(const std::vector<Section>& sections) {
  std::vector<const Section*> started;
  for (const Section& s : sections) {
    if (s.start.has_value()) started.push_back(&s);
  }
  std::sort(started.begin(), started.end(),
            [](const Section* a, const Section* b) { return *a->start < *b->start; });
  return started;
}

}  // namespace

int64_t Section::stop_ns() const {
  if (end.has_value()) return *end;
  if (term.has_value()) return *term;
  return process_end_ns;
}

absl::Status ApplyLog(absl::string_view log, std::map<std::string, Section>* sections) {
  for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 3 || fields.size() > 4) return BadLine(line, "expected 3 or 4 fields");
    int64_t ns = 0;
    if (!absl::SimpleAtoi(fields[1], &ns)) return BadLine(line, "bad timestamp");
    auto it = sections->find(std::string(fields[2]));
    if (it == sections->end()) return BadLine(line, "unknown tag");
    Section& s = it->second;
    std::optional<int64_t> value;
    if (fields.size() == 4) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(fields[3], &v)) return BadLine(line, "bad value");
      value = v;
    }
    const absl::string_view event = fields[0];
    const bool needs_value = event == "read" || event == "put" || event == "wrote";
    if (needs_value != value.has_value()) return BadLine(line, "value missing or unexpected");
    absl::Status status;
    if (event == "start") {
      status = SetOnce(&s.start, ns, line);
    } else if (event == "end") {
      status = SetOnce(&s.end, ns, line);
    } else if (event == "term") {
      status = SetOnce(&s.term, ns, line);
    } else if (event == "read") {
      status = SetOnce(&s.read_value, *value, line);
    } else if (event == "put") {
      status = SetOnce(&s.put_value, *value, line);
    } else if (event == "wrote") {
      status = SetOnce(&s.wrote_value, *value, line);
    } else {
      status = BadLine(line, "unknown event");
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

std::vector<Overlap> FindOverlaps(const std::vector<Section>& sections) {
  std::vector<Overlap> overlaps;
  const std::vector<const Section*> started = ByStart(sections);
  for (size_t i = 0; i < started.size(); ++i) {
    const Section& earlier = *started[i];
    for (size_t j = i + 1; j < started.size(); ++j) {
      const Section& later = *started[j];
      if (*later.start >= earlier.stop_ns()) break;  // started in order: no later one overlaps
      Overlap overlap;
      overlap.earlier = earlier.tag;
      overlap.later = later.tag;
      overlap.overlap_ns = std::min(earlier.stop_ns(), later.stop_ns()) - *later.start;
      overlap.allowed = earlier.lost() && earlier.term.has_value() && *earlier.term <= *later.start;
      overlaps.push_back(std::move(overlap));
    }
  }
  return overlaps;
}

CounterCheck CheckCounter(const std::vector<Section>& sections,
                          const std::vector<Overlap>& overlaps) {
  std::set<std::string> overlapping;
  for (const Overlap& o : overlaps) {
    overlapping.insert(o.earlier);
    overlapping.insert(o.later);
  }
  CounterCheck check;
  int64_t lo = 0;  // the values the counter can hold now
  int64_t hi = 0;
  for (const Section* s : ByStart(sections)) {
    const bool alone = overlapping.count(s->tag) == 0;
    if (s->read_value.has_value()) {
      const int64_t read = *s->read_value;
      if (alone && (read < lo || read > hi)) {
        check.errors.push_back(absl::StrCat(s->tag, " read ", read, " but the sections before it ",
                                            "can only have left [", lo, ", ", hi, "]"));
      }
      lo = alone ? read : std::min(lo, read);
      hi = alone ? read : std::max(hi, read);
    }
    if (s->wrote_value.has_value()) {
      ++check.writes;
      lo = alone ? *s->wrote_value : std::min(lo, *s->wrote_value);
      hi = alone ? *s->wrote_value : std::max(hi, *s->wrote_value);
    } else if (s->put_value.has_value()) {
      ++check.unknown_writes;  // sent, outcome unknown: the counter is the old or the new value
      hi = std::max(hi, *s->put_value);
    }
  }
  check.min_final = lo;
  check.max_final = hi;
  return check;
}

LimitCheck CheckLimit(const std::vector<Section>& sections, int limit) {
  LimitCheck check;
  const std::vector<const Section*> started = ByStart(sections);
  for (size_t i = 0; i < started.size(); ++i) {
    const Section& later = *started[i];
    int running = 1;
    std::vector<std::string> holders;  // running, and not told of a loss before `later` began
    for (size_t j = 0; j < i; ++j) {
      const Section& earlier = *started[j];
      if (earlier.stop_ns() <= *later.start) continue;
      ++running;
      const bool told = earlier.lost() && earlier.term.has_value() && *earlier.term <= *later.start;
      if (!told) holders.push_back(earlier.tag);
    }
    check.peak = std::max(check.peak, running);
    if (holders.size() >= static_cast<size_t>(limit)) {
      check.errors.push_back(absl::StrCat(later.tag, " started while ", holders.size(),
                                          " held permits: ", absl::StrJoin(holders, ", ")));
    }
  }
  return check;
}

}  // namespace registry::integration
