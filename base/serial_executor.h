// SPDX-License-Identifier: Apache-2.0
// base/serial_executor.h
//
// SerialExecutor runs tasks off the caller's thread, one at a time, in the order they were
// posted: the instance's ordered work (connection events, session observers, lock lost
// listeners) goes through one, so that none of it runs on a thread that renews the session or
// does network I/O, and no two of those callbacks run at once.
//
// The instance's executor is the watch listeners' dispatcher (watch/dispatcher.h): its task
// queue shares the listeners' worker, so an idle instance keeps one callback thread, not two.
// Code that only posts tasks (the lock manager) sees this interface.
//
// Thread safety: implementations allow every method to be called concurrently from any thread.
#ifndef BASE_SERIAL_EXECUTOR_H_
#define BASE_SERIAL_EXECUTOR_H_

#include <functional>

namespace registry {

class SerialExecutor {
 public:
  virtual ~SerialExecutor() = default;

  // Runs `task` after every task posted before it, never on the calling thread. A posted task is
  // never dropped: those pending when the executor stops run before its stop returns. False
  // (and `task` not run) once stopped.
  virtual bool Post(std::function<void()> task) = 0;

  // True when called from inside one of this executor's tasks. A task must not wait for a later
  // task: they run one at a time.
  virtual bool InTask() const = 0;
};

}  // namespace registry

#endif  // BASE_SERIAL_EXECUTOR_H_
