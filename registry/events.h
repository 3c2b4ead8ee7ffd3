// SPDX-License-Identifier: Apache-2.0
// registry/events.h
//
// The change events a watch delivers: part of the repository contract (repository.h), produced
// by the watch engine (watch/watch_engine.h).
//
// A watch on a key reports changes to that key and to every key below it ("/a" covers "/a" and
// "/a/b/c", never "/ab"):
//   kAdded    the key appeared (value: its value);
//   kUpdated  the key is still present and changed: its value, its flags or anything else that
//             moved its ModifyIndex (e.g. it was bound to another session);
//   kDeleted  the key is gone (value: the last value the listener was told about).
// Events for one key arrive in the order the store applied the changes. Rapid writes to one key
// may be coalesced into one event (the store's blocking queries only report the latest state),
// but once writes stop, the sequence of events a listener has received always brings its view
// to the store's state: no final state is lost.
//
// Thread safety: plain values.
#ifndef REGISTRY_EVENTS_H_
#define REGISTRY_EVENTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace registry {

struct DataChangedEvent {
  enum class Type { kAdded, kUpdated, kDeleted };

  Type type = Type::kAdded;
  // The key in the listener's key space: for a repository, the repository key ("/a/b"), with
  // the namespace stripped.
  std::string key;
  // Always engaged: the new value for kAdded and kUpdated, the last known value for kDeleted.
  // An empty value and a value Consul reports as null are both "".
  std::optional<std::string> value;
  // The entry's flags (new ones for kAdded/kUpdated, last known ones for kDeleted).
  uint64_t flags = 0;

  friend bool operator==(const DataChangedEvent&, const DataChangedEvent&) = default;
};

// "ADDED", "UPDATED" or "DELETED".
inline const char* DataChangedEventTypeName(DataChangedEvent::Type type) {
  switch (type) {
    case DataChangedEvent::Type::kAdded:
      return "ADDED";
    case DataChangedEvent::Type::kUpdated:
      return "UPDATED";
    case DataChangedEvent::Type::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

// Receives the events of one watch. Calls for one watch are never concurrent with each other and
// never run on the thread doing network I/O; an exception thrown by a listener is caught and
// logged, and the watch goes on.
using DataChangedListener = std::function<void(const DataChangedEvent& event)>;

}  // namespace registry

#endif  // REGISTRY_EVENTS_H_
