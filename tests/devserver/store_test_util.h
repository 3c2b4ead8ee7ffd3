// SPDX-License-Identifier: Apache-2.0
// tests/devserver/store_test_util.h
//
// Helpers for store-level tests: a settable clock and short-hand KV operations.
//
// Thread safety: FakeClock may be read and advanced from any thread.
#ifndef TESTS_DEVSERVER_STORE_TEST_UTIL_H_
#define TESTS_DEVSERVER_STORE_TEST_UTIL_H_

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "devserver/store.h"
#include "gtest/gtest.h"

namespace registry::devserver::testing {

class FakeClock {
 public:
  absl::Time Now() const {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::FromUnixSeconds(1700000000);
};

// A store on a fake clock whose only node is "node1" and whose session_ttl_min is 1 s.
inline std::unique_ptr<Store> MakeStore(FakeClock* clock) {
  Store::Options options;
  options.node_name = "node1";
  options.session_ttl_min = absl::Seconds(1);
  options.clock = [clock] { return clock->Now(); };
  return std::make_unique<Store>(std::move(options));
}

inline KvOp Op(KvVerb verb, std::string key, std::string value = "", uint64_t index = 0,
               std::string session = "") {
  KvOp op;
  op.verb = verb;
  op.key = std::move(key);
  op.value = std::move(value);
  op.index = index;
  op.session = std::move(session);
  return op;
}

// Applies `op`, failing the test on an error status; returns the boolean answer.
inline bool MustApply(Store& store, const KvOp& op) {
  absl::StatusOr<bool> result = store.Apply(op);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() && *result;
}

inline void Set(Store& store, const std::string& key, const std::string& value) {
  EXPECT_TRUE(MustApply(store, Op(KvVerb::kSet, key, value)));
}

// Creates a session on "node1"; `ttl` and `behavior` as Consul spells them.
inline std::string MustCreateSession(Store& store, const std::string& ttl = "",
                                     const std::string& behavior = "release",
                                     absl::Duration lock_delay = absl::Seconds(15)) {
  SessionCreateRequest request;
  request.node = "node1";
  request.ttl = ttl;
  request.behavior = behavior;
  request.lock_delay = lock_delay;
  absl::StatusOr<std::string> id = store.CreateSession(request);
  EXPECT_TRUE(id.ok()) << id.status();
  return id.ok() ? *id : "";
}

}  // namespace registry::devserver::testing

#endif  // TESTS_DEVSERVER_STORE_TEST_UTIL_H_
