// SPDX-License-Identifier: Apache-2.0
// integration/faults/cluster_workload.cc
#include "integration/faults/cluster_workload.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "consul/transport.h"

namespace registry::faults {
namespace {

constexpr char kNamespace[] = "faults";
constexpr char kLockName[] = "faults";
constexpr char kWatchId[] = "w0";
// Keys every instance writes: few, so that writes of different instances meet on each, but one
// per instance under load: the history checker's search grows fast with the calls left open at
// once on one key (with 32 writers on 5 keys it could not decide them in minutes), and each
// writer takes the keys in turn from its own offset, so about one call is open per key.
constexpr int kMinSharedKeys = 5;
constexpr int kUpdateEvery = 7;  // of an instance's rounds on the shared keys
constexpr int kDeleteEvery = 11;
constexpr size_t kFailuresKept = 8;
// Time a holder spends inside the critical section: long enough for a second holder to be
// seen if the lock ever let one in.
constexpr absl::Duration kHoldFor = absl::Milliseconds(2);

}  // namespace

void WorkloadCounts::Fail(std::atomic<int>& counter, const std::string& what,
                          const absl::Status& status) {
  ++counter;
  absl::MutexLock lock(&mu);
  if (first_failures.size() < kFailuresKept) {
    first_failures.push_back(
        absl::StrCat(absl::FormatTime(absl::Now()), " ", what, ": ", status.ToString()));
  }
}

void WorkloadCounts::FailWrite(const std::string& what, const absl::Status& status) {
  Fail(consul::IsUnknownOutcome(status) ? unknown_writes : failed_writes, what, status);
}

std::string WorkloadCounts::Report() {
  absl::MutexLock lock(&mu);
  return absl::StrCat(
      "writes ", writes.load(), " (failed ", failed_writes.load(), ", outcome unknown ",
      unknown_writes.load(), "), reads ", reads.load(), " (failed ", failed_reads.load(),
      ", stale ", stale_reads.load(), "), lock holds ", locks.load(), " (failed ",
      failed_locks.load(), ", overlaps ", overlaps.load(), ", lost ", lost_locks.load(),
      "), sessions lost ", sessions_lost.load(), ", calls not recorded ", unrecorded.load(),
      first_failures.empty() ? "" : "; first failures:\n  ", absl::StrJoin(first_failures, "\n  "));
}

absl::StatusOr<std::unique_ptr<ClusterWorkload>> ClusterWorkload::Start(
    const WorkloadOptions& options) {
  std::unique_ptr<ClusterWorkload> load(new ClusterWorkload(options));
  for (int i = 0; i < options.instances; ++i) {
    if (absl::Status added = load->AddInstance(); !added.ok()) return added;
  }
  absl::StatusOr<std::unique_ptr<history::HistoryRecorder>> watch_recorder =
      history::HistoryRecorder::Open(options.history_dir, "watcher-0");
  if (!watch_recorder.ok()) return watch_recorder.status();
  load->watch_recorder_ = *std::move(watch_recorder);
  ClusterWorkload* self = load.get();
  absl::StatusOr<Repository::WatchId> watching = load->instances_[0]->repository->Watch(
      "/data", [self](const DataChangedEvent& event) { self->OnWatchEvent(event); });
  if (!watching.ok()) return watching.status();
  for (int i = 0; i < options.instances; ++i) {
    load->threads_.emplace_back([self, i] { self->WriteLoop(i); });
    load->threads_.emplace_back([self, i] { self->LockLoop(i); });
  }
  return load;
}

std::string ClusterWorkload::DataKey(int instance, int n) const {
  return absl::StrCat("/data/", instance, "/", n % options_.keys_per_instance);
}

absl::Status ClusterWorkload::AddInstance() {
  const int i = static_cast<int>(instances_.size());
  auto instance = std::make_unique<Instance>();
  absl::StatusOr<std::unique_ptr<history::HistoryRecorder>> recorder =
      history::HistoryRecorder::Open(options_.history_dir, absl::StrCat("instance-", i));
  if (!recorder.ok()) return recorder.status();
  instance->recorder = *std::move(recorder);
  ConsulRepositoryOptions options;
  options.client.servers = options_.servers;
  options.client.request_timeout = absl::Seconds(10);  // the YAML default
  options.namespace_name = kNamespace;
  options.session_ttl = options_.ttl;
  options.session_lock_delay = absl::Seconds(1);
  options.block_query_wait = absl::Seconds(10);
  absl::StatusOr<ConsulInstance> made = NewConsulInstance(options);
  if (!made.ok()) return made.status();
  instance->repository = std::move(made->repository);
  absl::StatusOr<std::unique_ptr<lock::LockManager>> locks = lock::LockManager::Create(made->locks);
  if (!locks.ok()) return locks.status();
  instance->locks = *std::move(locks);
  absl::StatusOr<std::shared_ptr<lock::DistributedLock>> lock = instance->locks->GetLock(kLockName);
  if (!lock.ok()) return lock.status();
  instance->lock = *std::move(lock);
  WorkloadCounts* counts = &counts_;
  instance->repository->AddConnectionListener([counts](ConnectionState state) {
    if (state == ConnectionState::kLost) ++counts->sessions_lost;
  });
  instance->holds = std::make_unique<history::HoldRecorder>(*instance->recorder, kLockName);
  history::HoldRecorder* holds = instance->holds.get();
  instance->lock->AddLostListener([counts, holds](const std::string&, const absl::Status&) {
    ++counts->lost_locks;
    holds->Lost();
  });
  history::HistoryEntry online{
      .op = "ephemeral_put", .key = absl::StrCat("/online/", i), .value = absl::StrCat(i, ".up")};
  absl::Status persisted = history::TimeCall(
      online, [&] { return instance->repository->PersistEphemeral(online.key, *online.value); });
  Record(*instance, online, persisted);
  if (!persisted.ok()) return persisted;
  instances_.push_back(std::move(instance));
  return absl::OkStatus();
}

ClusterWorkload::~ClusterWorkload() {
  Stop();
  for (std::unique_ptr<Instance>& instance : instances_) {
    instance->lock.reset();
    instance->locks.reset();
    if (instance->repository != nullptr) instance->repository->Close().IgnoreError();
  }
}

void ClusterWorkload::Stop() {
  stop_ = true;
  for (std::thread& thread : threads_) thread.join();
  if (!threads_.empty()) {
    for (std::unique_ptr<Instance>& instance : instances_) {
      counts_.unrecorded += instance->holds->unrecorded();
    }
  }
  threads_.clear();
}

void ClusterWorkload::Record(Instance& instance, history::HistoryEntry& entry,
                             const absl::Status& status) {
  history::SetOutcome(entry, status);
  if (!instance.recorder->Record(entry).ok()) ++counts_.unrecorded;
}

void ClusterWorkload::OnWatchEvent(const DataChangedEvent& event) {
  if (!watch_recorder_->Record(history::WatchEventEntry(event, kWatchId)).ok()) {
    ++counts_.unrecorded;
  }
  absl::MutexLock lock(&view_mu_);
  if (event.type == DataChangedEvent::Type::kDeleted || !event.value.has_value()) {
    watch_view_.erase(event.key);
  } else {
    watch_view_[event.key] = *event.value;
  }
}

absl::Status ClusterWorkload::RecordWatchEnd() {
  history::HistoryEntry entry{.op = "watch_end", .key = "/data", .watch = kWatchId};
  entry.call = entry.ret = history::HostMonotonicNanos();
  return watch_recorder_->Record(entry);
}

void ClusterWorkload::WriteLoop(int index) {
  Instance& instance = *instances_[index];
  Repository& repository = *instance.repository;
  for (int n = 0; !stop_; ++n) {
    const std::string key = DataKey(index, n);
    const std::string value = absl::StrCat(index, ".", n);
    history::HistoryEntry put{.op = "put", .key = key, .value = value};
    absl::Status written = history::TimeCall(put, [&] { return repository.Persist(key, value); });
    Record(instance, put, written);
    if (!written.ok()) {
      counts_.FailWrite(absl::StrCat("persist ", key), written);
      continue;
    }
    ++counts_.writes;
    absl::StatusOr<std::optional<std::string>> read = RecordedGet(instance, key);
    if (!read.ok()) continue;
    if (*read != value) {
      counts_.Fail(counts_.stale_reads, absl::StrCat("get ", key),
                   absl::DataLossError(absl::StrCat("read ", read->value_or("(absent)"),
                                                    " after writing ", value)));
    }
    if (options_.shared_keys) WriteShared(index, n);
  }
}

void ClusterWorkload::WriteShared(int index, int n) {
  Instance& instance = *instances_[index];
  Repository& repository = *instance.repository;
  const int shared_keys = std::max(kMinSharedKeys, options_.instances);
  const std::string key = absl::StrCat("/data/shared/", (n + index) % shared_keys);
  const std::string value = absl::StrCat(instance.recorder->process(), ".", n);
  history::HistoryEntry write{.op = "put", .key = key, .value = value};
  if (n % kDeleteEvery == kDeleteEvery - 1) {
    write.op = "delete", write.value.reset();
  } else if (n % kUpdateEvery == kUpdateEvery - 1) {
    write.op = "update";
  }
  absl::Status written = history::TimeCall(write, [&] {
    if (write.op == "delete") return repository.Delete(key);
    if (write.op == "put") return repository.Persist(key, value);
    return repository.Update(key, value);
  });
  if (write.op == "update") {
    write.found = !absl::IsNotFound(written);  // "overwrite if present": NotFound wrote nothing
    if (absl::IsNotFound(written)) written = absl::OkStatus();
  }
  Record(instance, write, written);
  if (!written.ok()) {
    counts_.FailWrite(absl::StrCat(write.op, " ", key), written);
    return;
  }
  ++counts_.writes;
  RecordedGet(instance, key).IgnoreError();
}

absl::StatusOr<std::optional<std::string>> ClusterWorkload::RecordedGet(Instance& instance,
                                                                        const std::string& key) {
  history::HistoryEntry get{.op = "get", .key = key};
  absl::StatusOr<std::optional<std::string>> read =
      history::TimeCall(get, [&] { return instance.repository->Get(key); });
  if (read.ok()) get.found = read->has_value(), get.value = *read;
  Record(instance, get, read.status());
  if (!read.ok()) {
    counts_.Fail(counts_.failed_reads, absl::StrCat("get ", key), read.status());
  } else {
    ++counts_.reads;
  }
  return read;
}

void ClusterWorkload::LockLoop(int index) {
  Instance& instance = *instances_[index];
  lock::DistributedLock& lock = *instance.lock;
  while (!stop_) {
    absl::StatusOr<bool> locked = instance.holds->Acquire([&]() -> absl::StatusOr<bool> {
      absl::Status status = lock.Lock();
      if (!status.ok()) return status;
      return true;
    });
    if (!locked.ok()) {
      counts_.Fail(counts_.failed_locks, absl::StrCat("lock by instance ", index), locked.status());
      continue;
    }
    if (inside_.fetch_add(1) != 0) ++counts_.overlaps;
    ++counts_.locks;
    absl::SleepFor(kHoldFor);
    inside_.fetch_sub(1);
    if (absl::Status unlocked = instance.holds->Release([&] { return lock.Unlock(); });
        !unlocked.ok()) {
      counts_.Fail(counts_.failed_locks, absl::StrCat("unlock by instance ", index), unlocked);
    }
  }
}

absl::StatusOr<std::map<std::string, std::string>> ClusterWorkload::StoreView() {
  Repository& repository = *instances_[0]->repository;
  std::map<std::string, std::string> view;
  for (int i = 0; i < static_cast<int>(instances_.size()); ++i) {
    for (int n = 0; n < options_.keys_per_instance; ++n) {
      const std::string key = DataKey(i, n);
      absl::StatusOr<std::optional<std::string>> value = repository.Get(key);
      if (!value.ok()) return value.status();
      if (value->has_value()) view[key] = **value;
    }
  }
  for (int n = 0; options_.shared_keys && n < std::max(kMinSharedKeys, options_.instances); ++n) {
    const std::string key = absl::StrCat("/data/shared/", n);
    absl::StatusOr<std::optional<std::string>> value = repository.Get(key);
    if (!value.ok()) return value.status();
    if (value->has_value()) view[key] = **value;
  }
  return view;
}

absl::StatusOr<absl::Duration> ClusterWorkload::AwaitWatchConverged(absl::Duration timeout) {
  const absl::Time start = absl::Now();
  std::string difference = "never compared";
  while (absl::Now() - start < timeout) {
    absl::StatusOr<std::map<std::string, std::string>> store = StoreView();
    if (store.ok()) {
      absl::MutexLock lock(&view_mu_);
      if (watch_view_ == *store) return absl::Now() - start;
      difference =
          absl::StrCat("watch view has ", watch_view_.size(), " keys, store ", store->size());
      for (const auto& [key, value] : *store) {
        auto seen = watch_view_.find(key);
        if (seen == watch_view_.end() || seen->second != value) {
          absl::StrAppend(&difference, "; first difference at ", key, ": store ", value, ", watch ",
                          seen == watch_view_.end() ? "(absent)" : seen->second);
          break;
        }
      }
    } else {
      difference = std::string(store.status().message());
    }
    absl::SleepFor(absl::Milliseconds(100));  // polling the store for a comparison, not a race
  }
  return absl::DeadlineExceededError(absl::StrCat("watch never converged: ", difference));
}

absl::Status ClusterWorkload::CheckEphemeralKeys() {
  for (int i = 0; i < static_cast<int>(instances_.size()); ++i) {
    const std::string key = absl::StrCat("/online/", i);
    absl::StatusOr<std::optional<std::string>> value =
        instances_[(i + 1) % instances_.size()]->repository->Get(key);
    if (!value.ok()) return value.status();
    if (!value->has_value()) return absl::NotFoundError(absl::StrCat(key, " is gone"));
  }
  return absl::OkStatus();
}

}  // namespace registry::faults
