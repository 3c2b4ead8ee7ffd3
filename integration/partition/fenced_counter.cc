// SPDX-License-Identifier: Apache-2.0
// integration/partition/fenced_counter.cc
#include "integration/partition/fenced_counter.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lock/lock_manager.h"

namespace registry::partition {
namespace {

constexpr char kLockName[] = "fenced";
// How long a hold lasts before its write: long enough for faults to catch holders.
constexpr absl::Duration kHold = absl::Milliseconds(200);
constexpr absl::Duration kBetweenRounds = absl::Milliseconds(50);

// A write that cannot have been applied: the hold had ended, or the thread held nothing.
bool Refused(const absl::Status& status) {
  return absl::IsAborted(status) || absl::IsFailedPrecondition(status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<FencedWriter>> FencedWriter::Start(std::string name,
                                                                  const std::string& netns_path,
                                                                  ConsulRepositoryOptions options,
                                                                  const std::string& history_dir) {
  absl::StatusOr<std::unique_ptr<history::HistoryRecorder>> recorder =
      history::HistoryRecorder::Open(history_dir, name);
  if (!recorder.ok()) return recorder.status();
  std::unique_ptr<FencedWriter> writer(new FencedWriter(std::move(name), std::move(options)));
  writer->recorder_ = *std::move(recorder);
  writer->holds_ = std::make_unique<history::HoldRecorder>(*writer->recorder_, kLockName);
  absl::StatusOr<std::unique_ptr<NamespaceThread>> thread = NamespaceThread::Start(netns_path);
  if (!thread.ok()) return thread.status();
  writer->thread_ = *std::move(thread);
  FencedWriter* self = writer.get();
  writer->driver_ = std::thread([self] { self->thread_->Run([self] { self->Loop(); }); });
  return writer;
}

FencedWriter::~FencedWriter() { Stop(); }

void FencedWriter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (driver_.joinable()) driver_.join();
}

bool FencedWriter::StallNextHold(absl::Duration patience) {
  absl::MutexLock lock(&mu_);
  stall_next_ = true;
  stall_end_ = absl::InfiniteFuture();
  auto stalling = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stalling_ || stop_; };
  return mu_.AwaitWithTimeout(absl::Condition(&stalling), patience) && stalling_;
}

void FencedWriter::EndStallAt(absl::Time when) {
  absl::MutexLock lock(&mu_);
  stall_end_ = when;
}

bool FencedWriter::AwaitStallEnd() {
  absl::MutexLock lock(&mu_);
  stalling_ = true;
  auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stop_; };
  // EndStallAt may move the end while this waits: look again at least every 50 ms.
  while (!stop_ && absl::Now() < stall_end_) {
    mu_.AwaitWithDeadline(absl::Condition(&stopping),
                          std::min(stall_end_, absl::Now() + absl::Milliseconds(50)));
  }
  stalling_ = false;
  return !stop_;
}

std::vector<FencedAttempt> FencedWriter::Attempts() {
  absl::MutexLock lock(&mu_);
  return attempts_;
}

void FencedWriter::Loop() {
  // Made here, on the namespace thread, so the repository's sockets and threads live in the node.
  absl::StatusOr<ConsulInstance> instance = NewConsulInstance(options_);
  if (!instance.ok()) return;
  ConsulRepository& repository = *instance->repository;
  {
    absl::StatusOr<std::unique_ptr<lock::LockManager>> manager =
        lock::LockManager::Create(instance->locks);
    absl::StatusOr<std::shared_ptr<lock::DistributedLock>> lock =
        manager.ok() ? (*manager)->GetLock(kLockName) : manager.status();
    if (lock.ok()) {
      (*lock)->AddLostListener([this](const std::string&, const absl::Status&) { holds_->Lost(); });
    }
    auto stopped = [this] {
      absl::MutexLock l(&mu_);
      return stop_;
    };
    while (lock.ok() && !stopped()) Round(repository, **lock);
  }
  repository.Close().IgnoreError();
}

void FencedWriter::Round(Repository& repository, lock::DistributedLock& lock) {
  absl::StatusOr<bool> held = holds_->Acquire([&] { return lock.TryLock(absl::Seconds(2)); });
  if (!held.ok() || !*held) {
    absl::SleepFor(kBetweenRounds);
    return;
  }
  history::HistoryEntry get{.op = "get", .key = kFencedCounterKey};
  absl::StatusOr<std::optional<std::string>> read =
      history::TimeCall(get, [&] { return repository.Get(kFencedCounterKey); });
  if (read.ok()) get.found = read->has_value(), get.value = *read;
  Record(get, read.status());
  int64_t value = 0;
  if (read.ok() && read->has_value() && !absl::SimpleAtoi(**read, &value)) value = -1;
  if (read.ok() && value >= 0) {
    bool stalled = false;
    {
      absl::MutexLock l(&mu_);
      stalled = std::exchange(stall_next_, false);
    }
    const bool write = !stalled || AwaitStallEnd();
    absl::SleepFor(kHold);
    if (write) {
      history::HistoryEntry put{.op = "fenced_put",
                                .key = kFencedCounterKey,
                                .value = absl::StrCat(value + 1),
                                .lock = kLockName,
                                .hold = holds_->hold()};
      absl::Status status = history::TimeCall(
          put, [&] { return lock::PersistIfHeld(lock, kFencedCounterKey, *put.value); });
      Record(put, status);
      absl::MutexLock l(&mu_);
      attempts_.push_back({name_, value + 1, std::move(status), stalled});
    }
  }
  holds_->Release([&] { return lock.Unlock(); }).IgnoreError();
  absl::SleepFor(kBetweenRounds);
}

void FencedWriter::Record(history::HistoryEntry& entry, const absl::Status& status) {
  history::SetOutcome(entry, status);
  if (!recorder_->Record(entry).ok()) ++unrecorded_;
}

FencedFigures CheckFencedCounter(const std::vector<FencedAttempt>& attempts,
                                 int64_t final_counter) {
  FencedFigures figures;
  std::map<int64_t, std::string> acknowledged;  // value -> writer
  for (const FencedAttempt& a : attempts) {
    if (a.status.ok()) {
      ++figures.acknowledged;
      auto [it, fresh] = acknowledged.emplace(a.value, a.writer);
      if (!fresh) {
        figures.errors.push_back(absl::StrCat("value ", a.value, " acknowledged to ", it->second,
                                              " and to ", a.writer, ": a lost increment"));
      }
      if (a.value > final_counter) {
        figures.errors.push_back(absl::StrCat(a.writer, " wrote ", a.value,
                                              " but the counter ended at ", final_counter));
      }
    } else if (Refused(a.status)) {
      ++figures.refused;
    } else {
      ++figures.unknown;
    }
  }
  if (final_counter > figures.acknowledged + figures.unknown) {
    figures.errors.push_back(absl::StrCat("the counter ended at ", final_counter, " with only ",
                                          figures.acknowledged, " writes acknowledged and ",
                                          figures.unknown, " of unknown outcome"));
  }
  return figures;
}

}  // namespace registry::partition
