// SPDX-License-Identifier: Apache-2.0
// integration/partition/lock_workers.cc
#include "integration/partition/lock_workers.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "integration/testing/subprocess.h"

namespace registry::partition {
namespace {

using integration::Section;

constexpr absl::Duration kPoll = absl::Milliseconds(20);
// How long one `registryctl lock` run may take before the harness kills it: the lock wait, a
// section stuck behind a fault, the close.
constexpr absl::Duration kRunLimit = absl::Seconds(120);

std::string Seconds(absl::Duration d) { return absl::StrFormat("%.3f", absl::ToDoubleSeconds(d)); }

}  // namespace

LockWorkers::LockWorkers(const NetworkLab& lab, std::vector<int> nodes, LockWorkersOptions options)
    : lab_(lab), nodes_(std::move(nodes)), options_(std::move(options)) {}

LockWorkers::~LockWorkers() { Stop(); }

void LockWorkers::Start() {
  std::ofstream(options_.log, std::ios::trunc).close();
  for (int node : nodes_) threads_.emplace_back([this, node] { Loop(node); });
}

void LockWorkers::Stop() {
  stop_ = true;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void LockWorkers::Loop(int node) {
  for (int i = 0; !stop_; ++i) {
    const bool long_section = i % 3 == 2;
    Iteration run;
    run.tag = absl::StrCat(lab_.name(node), "i", i, long_section ? "L" : "");
    run.node = node;
    {
      absl::MutexLock lock(&mu_);
      node_of_[run.tag] = node;
    }
    std::vector<std::string> command = options_.command_prefix;
    for (std::string arg :
         {options_.registryctl, "--config=" + options_.config, std::string("lock"),
          options_.lock_name,
          absl::StrCat("--timeout-ms=", absl::ToInt64Milliseconds(options_.lock_timeout)),
          std::string("--"), std::string("/bin/sh"), options_.critical_section, options_.log,
          options_.registryctl, options_.config, run.tag,
          Seconds(long_section ? options_.long_pause : options_.short_pause), std::string("0")}) {
      command.push_back(std::move(arg));
    }
    const std::vector<std::string> argv = lab_.InNode(node, command);
    run.began = absl::Now();
    integration::RunResult result = integration::RunProcess(argv, kRunLimit);
    run.ended = absl::Now();
    run.exit_code = result.exit_code;
    run.err = std::move(result.err);
    const bool ok = run.exit_code == 0;
    {
      absl::MutexLock lock(&mu_);
      done_.push_back(std::move(run));
    }
    // Pacing a node that keeps failing (cut off), not a wait for some state.
    if (!ok && !stop_) absl::SleepFor(options_.retry_pause);
  }
}

std::map<std::string, Section> LockWorkers::ReadLog() {
  std::map<std::string, Section> sections;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [tag, node] : node_of_) sections[tag].tag = tag;
  }
  std::ifstream in(options_.log);
  std::stringstream text;
  text << in.rdbuf();
  // A line being appended right now may be cut: the caller polls again.
  if (!integration::ApplyLog(text.str(), &sections).ok()) return {};
  return sections;
}

std::optional<RunningSection> LockWorkers::AwaitRunning(absl::Duration timeout, bool long_only) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    for (const auto& [tag, s] : ReadLog()) {
      if (!s.start.has_value() || s.end.has_value() || s.term.has_value()) continue;
      if (long_only && !absl::EndsWith(tag, "L")) continue;
      absl::MutexLock lock(&mu_);
      bool finished = false;  // its process ended without logging an end (killed)
      for (const Iteration& run : done_) finished = finished || run.tag == tag;
      if (!finished) return RunningSection{tag, node_of_[tag], absl::FromUnixNanos(*s.start)};
    }
    absl::SleepFor(kPoll);
  }
  return std::nullopt;
}

bool LockWorkers::AwaitSuccessEverywhere(const std::vector<int>& nodes, absl::Time since,
                                         absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  auto everywhere = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (int node : nodes) {
      bool found = false;
      for (const Iteration& run : done_) {
        found = found || (run.node == node && run.exit_code == 0 && run.began >= since);
      }
      if (!found) return false;
    }
    return true;
  };
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithDeadline(absl::Condition(&everywhere), deadline);
}

int LockWorkers::succeeded() {
  absl::MutexLock lock(&mu_);
  int count = 0;
  for (const Iteration& run : done_) count += run.exit_code == 0;
  return count;
}

std::vector<Iteration> LockWorkers::Iterations() {
  absl::MutexLock lock(&mu_);
  return done_;
}

absl::StatusOr<std::vector<Section>> LockWorkers::Sections() {
  std::map<std::string, Section> sections;
  {
    absl::MutexLock lock(&mu_);
    for (const Iteration& run : done_) {
      Section& s = sections[run.tag];
      s.tag = run.tag;
      s.exit_code = run.exit_code;
      s.process_end_ns = absl::ToUnixNanos(run.ended);
    }
  }
  std::ifstream in(options_.log);
  std::stringstream text;
  text << in.rdbuf();
  if (absl::Status applied = integration::ApplyLog(text.str(), &sections); !applied.ok()) {
    return applied;
  }
  std::vector<Section> all;
  for (auto& [tag, s] : sections) all.push_back(std::move(s));
  return all;
}

int LockWorkers::NodeOf(const std::string& tag) {
  absl::MutexLock lock(&mu_);
  auto it = node_of_.find(tag);
  return it == node_of_.end() ? -1 : it->second;
}

}  // namespace registry::partition
