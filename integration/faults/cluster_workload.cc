// SPDX-License-Identifier: Apache-2.0
// integration/faults/cluster_workload.cc
#include "integration/faults/cluster_workload.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace registry::faults {
namespace {

constexpr char kNamespace[] = "faults";
constexpr int kKeysPerInstance = 20;
constexpr size_t kFailuresKept = 8;
// Time a holder spends inside the critical section: long enough for a second holder to be
// seen if the lock ever let one in.
constexpr absl::Duration kHoldFor = absl::Milliseconds(2);

std::string DataKey(int instance, int n) {
  return absl::StrCat("/data/", instance, "/", n % kKeysPerInstance);
}

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

std::string WorkloadCounts::Report() {
  absl::MutexLock lock(&mu);
  return absl::StrCat(
      "writes ", writes.load(), " (failed ", failed_writes.load(), "), reads ", reads.load(),
      " (failed ", failed_reads.load(), ", stale ", stale_reads.load(), "), lock holds ",
      locks.load(), " (failed ", failed_locks.load(), ", overlaps ", overlaps.load(), ", lost ",
      lost_locks.load(), "), sessions lost ", sessions_lost.load(),
      first_failures.empty() ? "" : "; first failures:\n  ", absl::StrJoin(first_failures, "\n  "));
}

absl::StatusOr<std::unique_ptr<ClusterWorkload>> ClusterWorkload::Start(const std::string& servers,
                                                                        int instances,
                                                                        absl::Duration ttl) {
  std::unique_ptr<ClusterWorkload> load(new ClusterWorkload());
  for (int i = 0; i < instances; ++i) {
    ConsulRepositoryOptions options;
    options.client.servers = servers;
    options.client.request_timeout = absl::Seconds(10);  // the YAML default
    options.namespace_name = kNamespace;
    options.session_ttl = ttl;
    options.session_lock_delay = absl::Seconds(1);
    options.block_query_wait = absl::Seconds(10);
    absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
    if (!repository.ok()) return repository.status();
    absl::StatusOr<std::unique_ptr<lock::LockManager>> locks = lock::NewLockManager(**repository);
    if (!locks.ok()) return locks.status();
    absl::StatusOr<std::shared_ptr<lock::DistributedLock>> lock = (*locks)->GetLock("faults");
    if (!lock.ok()) return lock.status();
    WorkloadCounts* counts = &load->counts_;
    (*repository)->AddConnectionListener([counts](ConnectionState state) {
      if (state == ConnectionState::kLost) ++counts->sessions_lost;
    });
    (*lock)->AddLostListener(
        [counts](const std::string&, const absl::Status&) { ++counts->lost_locks; });
    if (absl::Status online = (*repository)->PersistEphemeral(absl::StrCat("/online/", i), "up");
        !online.ok()) {
      return online;
    }
    load->instances_.push_back(
        Instance{*std::move(repository), *std::move(locks), *std::move(lock)});
  }
  ClusterWorkload* self = load.get();
  absl::StatusOr<Repository::WatchId> watching =
      load->instances_[0].repository->Watch("/data", [self](const DataChangedEvent& event) {
        absl::MutexLock lock(&self->view_mu_);
        if (event.type == DataChangedEvent::Type::kDeleted || !event.value.has_value()) {
          self->watch_view_.erase(event.key);
        } else {
          self->watch_view_[event.key] = *event.value;
        }
      });
  if (!watching.ok()) return watching.status();
  for (int i = 0; i < instances; ++i) {
    load->threads_.emplace_back([self, i] { self->WriteLoop(i); });
    load->threads_.emplace_back([self, i] { self->LockLoop(i); });
  }
  return load;
}

ClusterWorkload::~ClusterWorkload() {
  Stop();
  for (Instance& instance : instances_) {
    instance.lock.reset();
    instance.locks.reset();
    if (instance.repository != nullptr) instance.repository->Close().IgnoreError();
  }
}

void ClusterWorkload::Stop() {
  stop_ = true;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void ClusterWorkload::WriteLoop(int instance) {
  Repository& repository = *instances_[instance].repository;
  for (int n = 0; !stop_; ++n) {
    const std::string key = DataKey(instance, n);
    const std::string value = absl::StrCat(n);
    if (absl::Status written = repository.Persist(key, value); !written.ok()) {
      counts_.Fail(counts_.failed_writes, absl::StrCat("persist ", key), written);
      continue;
    }
    ++counts_.writes;
    absl::StatusOr<std::optional<std::string>> read = repository.Get(key);
    if (!read.ok()) {
      counts_.Fail(counts_.failed_reads, absl::StrCat("get ", key), read.status());
      continue;
    }
    ++counts_.reads;
    if (*read != value) {
      counts_.Fail(counts_.stale_reads, absl::StrCat("get ", key),
                   absl::DataLossError(absl::StrCat("read ", read->value_or("(absent)"),
                                                    " after writing ", value)));
    }
  }
}

void ClusterWorkload::LockLoop(int instance) {
  lock::DistributedLock& lock = *instances_[instance].lock;
  while (!stop_) {
    if (absl::Status locked = lock.Lock(); !locked.ok()) {
      counts_.Fail(counts_.failed_locks, absl::StrCat("lock by instance ", instance), locked);
      continue;
    }
    if (inside_.fetch_add(1) != 0) ++counts_.overlaps;
    ++counts_.locks;
    absl::SleepFor(kHoldFor);
    inside_.fetch_sub(1);
    if (absl::Status unlocked = lock.Unlock(); !unlocked.ok()) {
      counts_.Fail(counts_.failed_locks, absl::StrCat("unlock by instance ", instance), unlocked);
    }
  }
}

absl::StatusOr<std::map<std::string, std::string>> ClusterWorkload::StoreView() {
  Repository& repository = *instances_[0].repository;
  std::map<std::string, std::string> view;
  for (int i = 0; i < static_cast<int>(instances_.size()); ++i) {
    for (int n = 0; n < kKeysPerInstance; ++n) {
      const std::string key = DataKey(i, n);
      absl::StatusOr<std::optional<std::string>> value = repository.Get(key);
      if (!value.ok()) return value.status();
      if (value->has_value()) view[key] = **value;
    }
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
        instances_[(i + 1) % instances_.size()].repository->Get(key);
    if (!value.ok()) return value.status();
    if (!value->has_value()) return absl::NotFoundError(absl::StrCat(key, " is gone"));
  }
  return absl::OkStatus();
}

}  // namespace registry::faults
