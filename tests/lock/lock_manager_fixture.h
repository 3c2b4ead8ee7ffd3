// SPDX-License-Identifier: Apache-2.0
// tests/lock/lock_manager_fixture.h
//
// Shared by the request-sequence tests of the two-tier lock (lock_manager_test.cc,
// lock_manager_loss_test.cc): matchers for the requests a lock makes, canned answers, and the
// fixture with a strict gmock transport behind a FakeInstanceSession.
#ifndef TESTS_LOCK_LOCK_MANAGER_FIXTURE_H_
#define TESTS_LOCK_LOCK_MANAGER_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "consul/transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lock/distributed_lock.h"
#include "lock/lock_manager.h"
#include "nlohmann/json.hpp"
#include "tests/consul/mock_transport.h"
#include "tests/lock/fake_instance_session.h"

namespace registry::lock::testing {

using ::registry::consul::HttpMethod;
using ::registry::consul::HttpRequest;
using ::registry::consul::HttpResponse;
using ::registry::consul::testing::MockTransport;
using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::testing::StrictMock;

inline constexpr char kKeyPath[] = "/v1/kv/ns/lock/a/";
inline constexpr char kKey[] = "ns/lock/a/";

// The ops of a transaction request, or an empty array for any other request.
inline nlohmann::json TxnOps(const HttpRequest& request) {
  if (request.method != HttpMethod::kPut || request.path != "/v1/txn") return {};
  return nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
}
// The acquire: a txn of one "lock" op on the lock key with `session`.
MATCHER_P(IsAcquire, session, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 1 && ops[0]["KV"]["Verb"] == "lock" &&
         ops[0]["KV"]["Key"] == kKey && ops[0]["KV"]["Session"] == session;
}
// The release: a txn of check-index (the hold's) then "unlock" with `session`.
MATCHER_P(IsRelease, session, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 2 && ops[0]["KV"]["Verb"] == "check-index" &&
         ops[1]["KV"]["Verb"] == "unlock" && ops[1]["KV"]["Key"] == kKey &&
         ops[1]["KV"]["Session"] == session;
}
MATCHER(IsPlainRead, "") {
  return arg.method == HttpMethod::kGet && arg.path == kKeyPath &&
         arg.FindParam("index") == nullptr;
}
MATCHER_P(IsBlockingRead, index, "") {
  const std::string* sent = arg.FindParam("index");
  return arg.method == HttpMethod::kGet && arg.path == kKeyPath && sent != nullptr &&
         *sent == index;
}
// A release at the lock key's ModifyIndex `index`.
MATCHER_P2(IsReleaseAt, session, index, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ::testing::Matches(IsRelease(session))(arg) && ops[0]["KV"]["Index"] == index;
}

// A fenced write: a txn starting with check-index on the lock key, and no unlock.
MATCHER(IsFencedWrite, "") {
  const nlohmann::json ops = TxnOps(arg);
  if (!ops.is_array() || ops.size() < 2 || ops[0]["KV"]["Verb"] != "check-index") return false;
  for (const nlohmann::json& op : ops) {
    if (op["KV"]["Verb"] == "unlock") return false;
  }
  return true;
}

// The lock key's ModifyIndex after an acquire answered by Applied(true).
inline constexpr uint64_t kHoldIndex = 7;

// A txn answer for an acquire or a release: applied (the lock key's entry at kHoldIndex), or
// rolled back at its first op.
inline HttpResponse Applied(bool value) {
  if (!value) {
    return Response(409, R"({"Results":null,"Errors":[{"OpIndex":0,"What":"refused"}]})");
  }
  nlohmann::json entry = {{"LockIndex", 1},           {"Key", kKey},     {"Flags", 0},
                          {"Value", nullptr},         {"Session", "s1"}, {"CreateIndex", 1},
                          {"ModifyIndex", kHoldIndex}};
  return Response(200,
                  nlohmann::json({{"Results", {{{"KV", entry}}}}, {"Errors", nullptr}}).dump());
}

// A read of the lock key held by `session` ("" = unlocked) at `index`.
inline HttpResponse Entry(const std::string& session, uint64_t index) {
  nlohmann::json entry = {{"LockIndex", 1},   {"Key", "ns/lock/a/"}, {"Flags", 0},
                          {"Value", nullptr}, {"CreateIndex", 1},    {"ModifyIndex", index}};
  if (!session.empty()) entry["Session"] = session;
  return ReadResponse(200, nlohmann::json::array({entry}).dump(), index);
}

class LockManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session_ = std::make_unique<FakeInstanceSession>(transport_);
    session_->SetSession("s1");
  }

  // No key monitoring: these tests pin the acquire/release sequence only.
  static LockManagerOptions Options() {
    LockManagerOptions options;
    options.monitor_delay = absl::InfiniteDuration();
    return options;
  }

  // Resends of a request whose answers are all lost end after this, not after the default 10 s.
  void UseShortRequestTimeout() {
    ConsulRepositoryOptions options = FakeRepositoryOptions();
    options.client.request_timeout = absl::Milliseconds(300);
    session_ = std::make_unique<FakeInstanceSession>(transport_, std::move(options));
    session_->SetSession("s1");
  }

  std::unique_ptr<LockManager> NewManager(LockManagerOptions options = Options()) {
    absl::StatusOr<std::unique_ptr<LockManager>> manager =
        LockManager::Create(session_->parts(), std::move(options));
    EXPECT_TRUE(manager.ok()) << manager.status();
    return manager.ok() ? *std::move(manager) : nullptr;
  }

  std::shared_ptr<DistributedLock> LockA(LockManager& manager) {
    absl::StatusOr<std::shared_ptr<DistributedLock>> lock = manager.GetLock("a");
    EXPECT_TRUE(lock.ok()) << lock.status();
    return lock.ok() ? *lock : nullptr;
  }

  std::shared_ptr<StrictMock<MockTransport>> transport_ =
      std::make_shared<StrictMock<MockTransport>>();
  std::unique_ptr<FakeInstanceSession> session_;
};

}  // namespace registry::lock::testing

#endif  // TESTS_LOCK_LOCK_MANAGER_FIXTURE_H_
