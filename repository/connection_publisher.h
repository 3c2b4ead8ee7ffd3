// SPDX-License-Identifier: Apache-2.0
// repository/connection_publisher.h
//
// ConnectionPublisher is what an instance's connection listeners and session observers hear:
// the last connection state published (and the registry_consul_connection_state gauge that
// counts it), and the ordered delivery of connection states and session events. Events are
// delivered by tasks on the instance's serial executor, one at a time and with no lock held,
// in the order they were published: never on the thread that published them (the session's
// renewal thread, a caller's), so a listener may call anything without stalling renewal. The
// session keeper decides what to publish; the repository and the locks subscribe.
//
// An exception thrown by a listener or an observer is logged and goes no further
// (base/listener_registry.h).
//
// Lock order: the publisher's mutex is the innermost; while holding it, it calls nothing but the
// executor's Post (which only queues), so callers may publish while holding their own locks.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REPOSITORY_CONNECTION_PUBLISHER_H_
#define REPOSITORY_CONNECTION_PUBLISHER_H_

#include <deque>
#include <optional>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/listener_registry.h"
#include "base/serial_executor.h"
#include "registry/repository.h"
#include "repository/instance_session.h"

namespace registry {

class ConnectionPublisher {
 public:
  // Counts the instance as connecting until the first state. `executor` must outlive the
  // publisher, and run (or have run) the tasks it was given before the publisher goes.
  explicit ConnectionPublisher(SerialExecutor& executor);
  ~ConnectionPublisher();  // Close()
  ConnectionPublisher(const ConnectionPublisher&) = delete;
  ConnectionPublisher& operator=(const ConnectionPublisher&) = delete;

  // Makes `state` the instance's connection state and queues it for the listeners; nothing when
  // it is already the state, or once closed.
  void Publish(ConnectionState state);
  // Queues `event` for the session observers, in order with the states; nothing once closed.
  void PublishSessionEvent(InstanceSession::Event event);
  // The last state published; nullopt before the first (connecting).
  std::optional<ConnectionState> state() const;

  // Drops the events not yet delivered, delivers no more (a delivery in progress ends after its
  // current call), and takes the instance off the gauge. Idempotent.
  void Close();

  int AddConnectionListener(Repository::ConnectionListener listener);
  void RemoveConnectionListener(int id);
  int AddSessionObserver(InstanceSession::Observer observer);
  void RemoveSessionObserver(int id);

 private:
  using Event = std::variant<ConnectionState, InstanceSession::Event>;

  // Queues `event` and makes sure a Deliver() task is scheduled.
  void QueueLocked(Event event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A task on the executor: delivers the queued events, in order, with no lock held.
  void Deliver();
  // Adds `delta` to the gauge's series of the current state.
  void CountLocked(int delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  SerialExecutor& executor_;
  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<ConnectionState> state_ ABSL_GUARDED_BY(mu_);
  std::deque<Event> events_ ABSL_GUARDED_BY(mu_);
  bool delivering_ ABSL_GUARDED_BY(mu_) = false;  // a Deliver() task is scheduled or running
  // Called by Deliver() only, observers (locks) first; thread-safe on their own.
  ListenerRegistry<ConnectionState> listeners_{"connection listener"};
  ListenerRegistry<InstanceSession::Event> observers_{"session observer"};
};

}  // namespace registry

#endif  // REPOSITORY_CONNECTION_PUBLISHER_H_
