// SPDX-License-Identifier: Apache-2.0
#include "watch/dispatcher.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/listener_registry.h"
#include "base/log.h"
#include "base/monotonic.h"
#include "watch/watch_metrics.h"

namespace registry::watch {

Dispatcher::Dispatcher(DispatcherOptions options, std::function<void()> wake_supervisor)
    : options_([&options] {
        options.max_workers = std::max<size_t>(options.max_workers, 1);
        options.batch_size = std::max<size_t>(options.batch_size, 1);
        return options;
      }()),
      wake_supervisor_(std::move(wake_supervisor)),
      tasks_(std::make_shared<Slot>()) {}

Dispatcher::~Dispatcher() {
  Stop();
  std::vector<std::unique_ptr<Worker>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(workers_);
  }
  for (auto& worker : left) {
    if (worker->thread.get_id() == std::this_thread::get_id()) {
      Log(LogLevel::kError, "watch", "dispatcher destroyed from inside one of its listeners");
      std::abort();
    }
    if (worker->thread.joinable()) worker->thread.join();
  }
}

void Dispatcher::StartWorkerLocked() {
  auto worker = std::make_unique<Worker>();
  Worker* self = worker.get();
  workers_.push_back(std::move(worker));
  self->thread = std::thread([this, self] { WorkerLoop(self); });
}

size_t Dispatcher::IdleWorkersLocked() const {
  size_t idle = 0;
  for (const auto& worker : workers_) idle += worker->idle && !worker->done ? 1 : 0;
  return idle;
}

void Dispatcher::Add(uint64_t id, DataChangedListener listener) {
  auto slot = std::make_shared<Slot>();
  slot->id = id;
  slot->listener = std::move(listener);
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  slots_[id] = std::move(slot);
}

void Dispatcher::SetSupervisor(std::function<void()> wake) {
  std::function<void()> previous;  // destroyed after the lock is released
  absl::MutexLock lock(&supervisor_mu_);
  previous = std::exchange(wake_supervisor_, std::move(wake));
}

void Dispatcher::WakeSupervisor() {
  absl::MutexLock lock(&supervisor_mu_);
  if (wake_supervisor_) wake_supervisor_();
}

bool Dispatcher::ScheduleLocked(const std::shared_ptr<Slot>& slot) {
  // The primary worker, started with the first work and running until Stop().
  if (workers_.empty()) StartWorkerLocked();
  if (!slot->queued && !slot->running) {
    slot->queued = true;
    run_queue_.push_back(slot);
    work_cv_.Signal();
  }
  if (!run_queue_.empty() && IdleWorkersLocked() == 0 && next_check_ == absl::InfiniteFuture()) {
    next_check_ = MonotonicNow() + options_.stall_threshold;
    return true;
  }
  return false;
}

void Dispatcher::Enqueue(uint64_t id, std::vector<DataChangedEvent> events) {
  if (events.empty()) return;
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    auto it = slots_.find(id);
    if (it == slots_.end()) return;
    const absl::Time now = MonotonicNow();
    for (DataChangedEvent& event : events) {
      it->second->pending.emplace_back(QueuedEvent{std::move(event), now});
    }
    wake = ScheduleLocked(it->second);
  }
  if (wake) WakeSupervisor();
}

void Dispatcher::EnqueueCall(uint64_t id, std::function<void()> call) {
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    auto it = slots_.find(id);
    if (it == slots_.end()) return;
    it->second->pending.emplace_back(std::move(call));
    wake = ScheduleLocked(it->second);
  }
  if (wake) WakeSupervisor();
}

bool Dispatcher::Post(std::function<void()> task) {
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    tasks_->pending.emplace_back(std::move(task));
    wake = ScheduleLocked(tasks_);
  }
  if (wake) WakeSupervisor();
  return true;
}

void Dispatcher::Remove(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(id);
  if (it == slots_.end()) return;
  std::shared_ptr<Slot> slot = std::move(it->second);
  slots_.erase(it);
  slot->removed.store(true, std::memory_order_release);
  slot->pending.clear();  // a queued slot stays in run_queue_; workers skip removed ones
  // From its own listener: the call in progress is the caller's own stack frame.
  if (slot->running && slot->runner == std::this_thread::get_id()) return;
  while (slot->running) idle_cv_.Wait(&mu_);
}

absl::Time Dispatcher::Supervise(absl::Time now) {
  std::vector<std::unique_ptr<Worker>> done;
  absl::Time next;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if ((*it)->done) {
        done.push_back(std::move(*it));
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
    next_check_ = absl::InfiniteFuture();
    if (!stopping_ && !run_queue_.empty() && IdleWorkersLocked() == 0) {
      // Work waits and nobody is free: stalled once even the latest batch is too old.
      absl::Time latest = absl::InfinitePast();
      for (const auto& worker : workers_) latest = std::max(latest, worker->busy_since);
      if (latest == absl::InfiniteFuture()) {
        next_check_ = now + options_.stall_threshold;  // a worker is between batches
      } else if (now - latest >= options_.stall_threshold) {
        if (workers_.size() < options_.max_workers) {
          StartWorkerLocked();
          next_check_ = now + options_.stall_threshold;
        }
      } else {
        next_check_ = latest + options_.stall_threshold;
      }
    }
    next = next_check_;
  }
  for (auto& worker : done) worker->thread.join();
  return next;
}

void Dispatcher::Stop() {
  std::vector<std::unique_ptr<Worker>> to_join;
  std::deque<Work> tasks;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    tasks.swap(tasks_->pending);  // a worker running a batch of them finishes it first
    for (auto& [id, slot] : slots_) {
      slot->removed.store(true, std::memory_order_release);
      slot->pending.clear();
    }
    slots_.clear();
    run_queue_.clear();
    work_cv_.SignalAll();
    idle_cv_.SignalAll();
    for (auto it = workers_.begin(); it != workers_.end();) {
      if ((*it)->thread.get_id() == std::this_thread::get_id()) {
        ++it;  // the caller is this worker's listener: the destructor joins it
      } else {
        to_join.push_back(std::move(*it));
        it = workers_.erase(it);
      }
    }
  }
  for (auto& worker : to_join) {
    if (worker->thread.joinable()) worker->thread.join();
  }
  if (tasks.empty()) return;
  // For InTask(). Every other worker is joined; when the caller is itself a task, its batch
  // goes on after this returns, so its state is restored.
  bool was_running = false;
  std::thread::id was_runner;
  {
    absl::MutexLock lock(&mu_);
    was_running = std::exchange(tasks_->running, true);
    was_runner = std::exchange(tasks_->runner, std::this_thread::get_id());
  }
  RunBatch(tasks_.get(),
           {std::make_move_iterator(tasks.begin()), std::make_move_iterator(tasks.end())});
  absl::MutexLock lock(&mu_);
  tasks_->running = was_running;
  tasks_->runner = was_runner;
}

bool Dispatcher::InTask() const {
  absl::MutexLock lock(&mu_);
  return tasks_->running && tasks_->runner == std::this_thread::get_id();
}

size_t Dispatcher::worker_count() const {
  absl::MutexLock lock(&mu_);
  size_t live = 0;
  for (const auto& worker : workers_) live += worker->done ? 0 : 1;
  return live;
}

void Dispatcher::WorkerLoop(Worker* self) {
  absl::MutexLock lock(&mu_);
  const bool primary = !workers_.empty() && workers_.front().get() == self;
  while (!stopping_) {
    if (run_queue_.empty()) {
      self->idle = true;
      if (primary) {
        work_cv_.Wait(&mu_);
      } else if (work_cv_.WaitWithTimeout(&mu_, options_.idle_retire) && run_queue_.empty() &&
                 !stopping_) {
        self->idle = false;
        break;  // an extra worker without work for idle_retire: retire
      }
      self->idle = false;
      continue;
    }
    std::shared_ptr<Slot> slot = std::move(run_queue_.front());
    run_queue_.pop_front();
    slot->queued = false;
    if (slot->removed.load(std::memory_order_acquire)) continue;
    slot->running = true;
    slot->runner = std::this_thread::get_id();
    std::vector<Work> batch;
    const size_t take = std::min(slot->pending.size(), options_.batch_size);
    batch.reserve(take);
    for (size_t i = 0; i < take; ++i) {
      batch.push_back(std::move(slot->pending.front()));
      slot->pending.pop_front();
    }
    self->busy_since = MonotonicNow();
    bool wake = false;
    if (!run_queue_.empty() && IdleWorkersLocked() == 0 && next_check_ == absl::InfiniteFuture()) {
      next_check_ = self->busy_since + options_.stall_threshold;
      wake = true;
    }
    mu_.Unlock();
    if (wake) WakeSupervisor();
    RunBatch(slot.get(), std::move(batch));
    mu_.Lock();
    self->busy_since = absl::InfiniteFuture();
    slot->running = false;
    slot->runner = std::thread::id();
    idle_cv_.SignalAll();
    if (!slot->removed.load(std::memory_order_acquire) && !stopping_ && !slot->pending.empty()) {
      slot->queued = true;
      run_queue_.push_back(std::move(slot));
    }
  }
  self->done = true;
}

void Dispatcher::RunBatch(Slot* slot, std::vector<Work> batch) {
  const bool tasks = slot == tasks_.get();  // never dropped, so never cut short
  for (Work& work : batch) {
    if (!tasks && slot->removed.load(std::memory_order_acquire)) break;
    if (auto* call = std::get_if<std::function<void()>>(&work)) {
      CallContainingExceptions(*call, [&] {
        return tasks ? std::string("watch dispatcher task")
                     : absl::StrCat("watch ", slot->id, " call");
      });
      continue;
    }
    const QueuedEvent& queued = std::get<QueuedEvent>(work);
    const DataChangedEvent& event = queued.event;
    WatchFamilies& m = WatchMetrics();
    const absl::Time started = MonotonicNow();
    m.watch_delivery_lag.Get().Observe(started - queued.queued_at);
    CallContainingExceptions([&] { slot->listener(event); },
                             [&] {
                               return absl::StrCat("watch ", slot->id, " listener on ",
                                                   DataChangedEventTypeName(event.type), " ",
                                                   event.key);
                             });
    m.watch_callback_duration.Get().Observe(MonotonicNow() - started);
    m.watch_events.Get().Increment();
  }
}

}  // namespace registry::watch
