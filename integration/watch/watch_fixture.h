// SPDX-License-Identifier: Apache-2.0
// integration/watch/watch_fixture.h
//
// Fixture of the watch engine integration tests: a fresh server per test (the dev server or real
// Consul, see integration/testing/server_test.h), a raw client to write and inspect, engines whose
// events carry repository keys (namespace "ns" stripped), and Mirror, a listener that applies
// events to a map and that tests wait on with deadlines (never fixed sleeps).
#ifndef INTEGRATION_WATCH_WATCH_FIXTURE_H_
#define INTEGRATION_WATCH_WATCH_FIXTURE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "consul/client.h"
#include "devserver/dev_server.h"
#include "gtest/gtest.h"
#include "integration/testing/server_test.h"
#include "registry/events.h"
#include "watch/watch_engine.h"

namespace registry::watch::testing {

// Long enough for a loaded machine, short enough to fail fast.
using registry::testing::Eventually;
using registry::testing::kPatience;

using KeyValues = std::map<std::string, std::string>;

// Applies events to a key -> value map and records them. Flags protocol violations: ADDED for a
// key it holds, UPDATED or DELETED for one it does not, DELETED with another value than the last
// one reported, and concurrent calls.
class Mirror {
 public:
  DataChangedListener Listener();

  // Waits until the view equals `expected`; false on timeout.
  bool AwaitView(const KeyValues& expected, absl::Duration timeout = kPatience);
  // Waits until at least `count` events arrived; false on timeout.
  bool AwaitEventCount(size_t count, absl::Duration timeout = kPatience);

  KeyValues view();
  std::vector<DataChangedEvent> events();
  std::vector<std::string> violations();

 private:
  absl::Mutex mu_;
  bool in_call_ ABSL_GUARDED_BY(mu_) = false;
  KeyValues view_ ABSL_GUARDED_BY(mu_);
  std::vector<DataChangedEvent> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
};

// The event `type` of `key` with `value`, to compare with what a Mirror received.
DataChangedEvent Event(DataChangedEvent::Type type, std::string key, std::string value);

// "ADDED /a=v" for test messages.
std::string Describe(const DataChangedEvent& event);
std::string Describe(const std::vector<DataChangedEvent>& events);
std::string Describe(const KeyValues& view);

class WatchTest : public registry::testing::ServerTest {
 protected:
  // Engine options: the given block wait, 20 ms minimum back-off, namespace "ns" stripped.
  WatchEngineOptions EngineOptions(absl::Duration block_wait = absl::Seconds(10));
  std::unique_ptr<WatchEngine> NewEngine(const WatchEngineOptions& options);
  std::unique_ptr<WatchEngine> NewEngine() { return NewEngine(EngineOptions()); }

  // Writes through the raw client, retrying (for at most kPatience) while faults make it fail.
  void Put(const std::string& consul_key, const std::string& value);
  void Delete(const std::string& consul_key, bool recurse = false);

  // What the server holds under the watch of `consul_key`, as a listener should see it.
  KeyValues ServerView(const std::string& consul_key);
};

// Polls `condition` every 10 ms until it holds or `timeout` passes; returns its last value. For
// state with no notification (e.g. the dev server's connection count).
using registry::testing::ProcessThreadCount;

}  // namespace registry::watch::testing

#endif  // INTEGRATION_WATCH_WATCH_FIXTURE_H_
