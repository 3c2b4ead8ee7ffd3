// SPDX-License-Identifier: Apache-2.0
// watch/dispatcher.h
//
// Dispatcher runs the listeners of many watches on a tiny, elastic set of worker threads, so
// that no listener ever runs on the IO thread and the thread count does not grow with the
// number of watches.
//
// Design (why not a thread per watch, nor a fixed pool): one worker serves every watch in the
// steady state, so an idle engine costs two threads (the IO thread and this worker) whatever its
// number of watches. Each watch has a FIFO of pending events and sits at most once in a run
// queue; a worker takes a watch, runs a bounded batch of its events, and puts it back at the end
// of the queue if more are pending. That gives per-watch order, no concurrent calls of one
// watch's listener, and round-robin fairness between watches. A slow listener must not stall
// the others: the supervisor (Supervise(), driven by the engine's IO thread, which is awake
// anyway) notices when work is queued while every worker has been inside one batch for longer
// than `stall_threshold`, and starts one more worker, up to `max_workers`. Extra workers retire
// after `idle_retire` without work (and are joined), so the count falls back to one. Only when
// `max_workers` listeners are stuck at once does the rest wait.
//
// Besides data events, a watch's queue can carry calls (a key watch's observations, see
// watch_engine.h), and the dispatcher has one queue of its own for posted tasks (Post()), which
// are never dropped. Everything in one queue runs in order, so the task queue is a serial
// executor (base/serial_executor.h): the instance runs its ordered work on it (connection
// events, session observers, lock lost listeners) and lends the dispatcher to its watch engine,
// so that both share one worker.
//
// No thread before work: the first worker starts with the first queued event, call or task.
// The supervisor is whoever calls Supervise() (a watch engine's IO thread); with none set,
// workers are never added, which costs nothing while only the task queue has work (it runs on
// one worker at a time anyway).
//
// Thread safety: all methods may be called concurrently from any thread; listeners run on the
// workers, at most one call per watch at a time.
#ifndef WATCH_DISPATCHER_H_
#define WATCH_DISPATCHER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/serial_executor.h"
#include "registry/events.h"

namespace registry::watch {

struct DispatcherOptions {
  // A batch running longer than this while other watches wait gets an extra worker.
  absl::Duration stall_threshold = absl::Milliseconds(100);
  // Upper bound on workers (the first one included); at least 1.
  size_t max_workers = 8;
  // Extra workers idle for this long exit.
  absl::Duration idle_retire = absl::Seconds(2);
  // Events of one watch run back to back before the worker moves on to the next watch.
  size_t batch_size = 64;
};

class Dispatcher final : public SerialExecutor {
 public:
  // Starts no thread (see "No thread before work"); `wake_supervisor` as for SetSupervisor().
  explicit Dispatcher(DispatcherOptions options, std::function<void()> wake_supervisor = nullptr);
  // Stops (see Stop()). Must not run on one of this dispatcher's workers.
  ~Dispatcher() override;
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // The id of the dispatcher's own task queue (Post()); never a watch's id.
  static constexpr uint64_t kTaskQueue = 0;

  // Registers `listener` under `id` (unique, never reused, not kTaskQueue). A watch whose queue
  // carries calls only may have a null listener. Ignored after Stop().
  void Add(uint64_t id, DataChangedListener listener);

  // Appends `events` to the queue of watch `id`, to be delivered in order. Ignored for an
  // unknown or removed id, and after Stop().
  void Enqueue(uint64_t id, std::vector<DataChangedEvent> events);
  // Appends `call` to the queue of watch `id`, in order with its events; dropped like them.
  void EnqueueCall(uint64_t id, std::function<void()> call);

  // Runs `task` on a worker, after every task posted before it. A task is never dropped: those
  // still pending when Stop() is called run on the thread calling Stop() before it returns.
  // False (and `task` not run) after Stop().
  bool Post(std::function<void()> task) override;

  // Forgets watch `id` and drops its pending events. When it returns, the listener is not
  // running and will not be called again — except when called from inside that listener: then
  // it returns at once and the listener is not called again after the current call returns.
  // (Called from another watch's listener it waits for this one's current call, so two
  // listeners removing each other at the same time would wait for each other: don't.)
  void Remove(uint64_t id);

  // Names the supervisor: `wake` is called (quickly, from any thread, with no lock of this
  // dispatcher held) when work waits behind busy workers and no check is planned, and the
  // supervisor must then call Supervise() soon. Null: no supervisor. When this returns the
  // previous `wake` is not running and will not be called again.
  void SetSupervisor(std::function<void()> wake) ABSL_LOCKS_EXCLUDED(supervisor_mu_);

  // Starts an extra worker if work waits and every worker has been busy with one batch for at
  // least stall_threshold; joins retired workers. Returns when to call it again
  // (InfiniteFuture() when nothing waits). `now` and the result are on MonotonicNow()'s clock
  // (base/monotonic.h), as every time the engine keeps.
  absl::Time Supervise(absl::Time now);

  // Drops every pending event and call, forgets every watch, joins every worker once its current
  // call returns, then runs the posted tasks still pending. Called from inside a listener, it
  // returns without waiting for that call (its worker is joined by the destructor). Idempotent.
  void Stop();

  // Number of live worker threads (for tests and benchmarks).
  size_t worker_count() const;

  // True when called from inside a posted task (on a worker, or run by Stop()). A task must not
  // wait for a later task: they run one at a time.
  bool InTask() const override;

 private:
  // One entry of a queue: an event for the watch's listener, or a call (or posted task).
  struct QueuedEvent {
    DataChangedEvent event;
    absl::Time queued_at;  // monotonic: when the answer that revealed it was handled
  };
  using Work = std::variant<QueuedEvent, std::function<void()>>;

  struct Slot {
    uint64_t id = 0;
    DataChangedListener listener;
    std::deque<Work> pending;
    bool queued = false;   // in run_queue_ (guarded by mu_)
    bool running = false;  // a worker is running its batch (guarded by mu_)
    // That worker, while running (guarded by mu_). Kept here rather than in a thread_local so
    // the plugin has no TLS of its own: in a dlopen'd library every thread_local is dynamic TLS.
    std::thread::id runner;
    std::atomic<bool> removed{false};  // set under mu_; read by the running worker without it
  };
  struct Worker {
    std::thread thread;
    absl::Time busy_since = absl::InfiniteFuture();  // start of the current batch
    bool idle = false;
    bool done = false;  // the thread function returned (or is returning)
  };

  void StartWorkerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WorkerLoop(Worker* self);
  // Puts `slot`, which has just got work, in the run queue unless it is there or running;
  // true when the supervisor must be woken.
  bool ScheduleLocked(const std::shared_ptr<Slot>& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunBatch(Slot* slot, std::vector<Work> batch) ABSL_LOCKS_EXCLUDED(mu_);
  size_t IdleWorkersLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Calls the supervisor's `wake`, if any. Never with mu_ held.
  void WakeSupervisor() ABSL_LOCKS_EXCLUDED(mu_, supervisor_mu_);

  const DispatcherOptions options_;
  // Held while `wake` runs, so that SetSupervisor() can promise it no longer runs. Never held
  // together with mu_.
  absl::Mutex supervisor_mu_;
  std::function<void()> wake_supervisor_ ABSL_GUARDED_BY(supervisor_mu_);

  mutable absl::Mutex mu_;
  absl::CondVar work_cv_;  // signalled when run_queue_ grows or on Stop()
  absl::CondVar idle_cv_;  // signalled when a slot stops running
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<Slot> tasks_;  // the kTaskQueue slot; never in slots_, never removed
  std::deque<std::shared_ptr<Slot>> run_queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Worker>> workers_ ABSL_GUARDED_BY(mu_);
  absl::Time next_check_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
};

}  // namespace registry::watch

#endif  // WATCH_DISPATCHER_H_
