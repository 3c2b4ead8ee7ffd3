// tests/lock/lock_manager_test.cc
//
// The request sequence of the two-tier lock against a strict gmock transport: every request the
// lock makes must be expected, so an extra read or session call fails the test.
#include "lock/lock_manager.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "consul/transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/consul/mock_transport.h"
#include "tests/lock/fake_instance_session.h"

namespace registry::lock {
namespace {

using ::registry::consul::HttpMethod;
using ::registry::consul::HttpRequest;
using ::registry::consul::HttpResponse;
using ::registry::consul::testing::MockTransport;
using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::registry::lock::testing::FakeInstanceSession;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Invoke;
using ::testing::Return;
using ::testing::StrictMock;

constexpr char kKeyPath[] = "/v1/kv/ns/lock/a/";
constexpr char kKey[] = "ns/lock/a/";

// The ops of a transaction request, or an empty array for any other request.
nlohmann::json TxnOps(const HttpRequest& request) {
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
constexpr uint64_t kHoldIndex = 7;

// A txn answer for an acquire or a release: applied (the lock key's entry at kHoldIndex), or
// rolled back at its first op.
HttpResponse Applied(bool value) {
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
HttpResponse Entry(const std::string& session, uint64_t index) {
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

  std::unique_ptr<LockManager> NewManager(LockManagerOptions options = Options()) {
    absl::StatusOr<std::unique_ptr<LockManager>> manager =
        LockManager::Create(*session_, std::move(options));
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

TEST_F(LockManagerTest, UncontendedCycleIsOneAcquireAndOneReleaseWithoutSessionCalls) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_TRUE(lock->IsHeldByCurrentThread());
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
  EXPECT_EQ(session_->acquire_calls(), 0);  // the live session was used as is
}

TEST_F(LockManagerTest, FirstLockOfAnInstanceWithoutSessionCreatesItOnce) {
  session_->SetSession("");
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
      .Times(2)
      .WillRepeatedly(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _))
      .Times(2)
      .WillRepeatedly(Return(Applied(true)));
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(lock->Lock().ok());
    ASSERT_TRUE(lock->Unlock().ok());
  }
  EXPECT_EQ(session_->acquire_calls(), 1);
}

TEST_F(LockManagerTest, ReentryCountsHoldsWithoutRequestsAndOnlyTheLastUnlockReleases) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(lock->Lock().ok());
  absl::StatusOr<bool> again = lock->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(again.ok() && *again);
  EXPECT_EQ(lock->HoldCount(), 3);
  ASSERT_TRUE(lock->Unlock().ok());
  ASSERT_TRUE(lock->Unlock().ok());
  ::testing::Mock::VerifyAndClearExpectations(transport_.get());
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_EQ(lock->HoldCount(), 0);
}

TEST_F(LockManagerTest, UnlockByAThreadThatDoesNotHoldTheLockIsFailedPrecondition) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Status never_held = lock->Unlock();
  EXPECT_TRUE(absl::IsFailedPrecondition(never_held)) << never_held;
  EXPECT_THAT(never_held.message(), HasSubstr("'a'"));

  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Status other;
  std::thread([&] { other = lock->Unlock(); }).join();
  EXPECT_TRUE(absl::IsFailedPrecondition(other)) << other;
  EXPECT_TRUE(lock->IsHeldByCurrentThread());
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, ContendedLockBlocksOnTheKeyWithTheRemainingTimeInMilliseconds) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  HttpRequest blocking;
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("other", 7)));
    EXPECT_CALL(*transport_, Execute(IsBlockingRead("7"), _))
        .WillOnce(Invoke([&](const HttpRequest& request, consul::Canceller*) {
          blocking = request;
          return Entry("", 8);  // released
        }));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::Seconds(1));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_TRUE(*acquired);
  const std::string* wait = blocking.FindParam("wait");
  ASSERT_NE(wait, nullptr);
  ASSERT_TRUE(absl::EndsWith(*wait, "ms")) << *wait;
  int64_t millis = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::string_view(*wait).substr(0, wait->size() - 2), &millis));
  // The remaining time less Consul's jitter allowance (1/17), so the answer is never late.
  EXPECT_LE(millis, 1000 * 16 / 17);
  EXPECT_GT(millis, 800);
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, LockDelayIsRetriedOnATimerNotWithABlockingQuery) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  {
    InSequence sequence;
    // Refused although nobody holds the key (twice, to rule out a release in between).
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(ReadResponse(404, "", 9)));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(ReadResponse(404, "", 9)));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillOnce(Return(Applied(true)));
  }
  const absl::Time start = absl::Now();
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_GE(absl::Now() - start, session_->options().lock_retry);
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, ZeroTimeoutMakesASingleAttemptAndHoldsNothingAfterFalse) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(false)));
  absl::StatusOr<bool> acquired = lock->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
  EXPECT_TRUE(absl::IsFailedPrecondition(lock->Unlock()));
}

TEST_F(LockManagerTest, AcquireWhoseAnswerWasLostIsReleasedAndChecked) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Notification checked;
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
        .WillOnce(Return(absl::UnavailableError("response timed out")));
    // Ours: released at the index read. Then a second look.
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("s1", 8)));
    EXPECT_CALL(*transport_, Execute(IsReleaseAt("s1", 8), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _))
        .WillOnce(Invoke([&](const HttpRequest&, consul::Canceller*) {
          checked.Notify();
          return Entry("", 9);
        }));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::ZeroDuration());
  EXPECT_TRUE(absl::IsUnavailable(acquired.status())) << acquired.status();
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
  // The release runs on the manager's thread, so that the caller is not held past its deadline.
  EXPECT_TRUE(checked.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(LockManagerTest, AcquireAppliedAfterTheFirstLookIsReleasedAtTheSecond) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Notification released;
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
        .WillOnce(Return(absl::UnavailableError("response timed out")));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("", 8)));
    EXPECT_CALL(*transport_, Execute(IsPlainRead(), _)).WillOnce(Return(Entry("s1", 9)));
    EXPECT_CALL(*transport_, Execute(IsReleaseAt("s1", 9), _))
        .WillOnce(Invoke([&](const HttpRequest&, consul::Canceller*) {
          released.Notify();
          return Applied(true);
        }));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::ZeroDuration());
  EXPECT_FALSE(acquired.ok() && *acquired);
  EXPECT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(LockManagerTest, InvalidSessionIsReportedAndTheNextAttemptUsesItsSuccessor) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
        .WillOnce(Invoke([&](const HttpRequest&, consul::Canceller*) {
          session_->SetSession("s2");
          session_->Fire(InstanceSession::EventKind::kCreated, "s2");
          return Response(500, "Invalid session \"s1\"");
        }));
    EXPECT_CALL(*transport_, Execute(IsAcquire("s2"), _)).WillOnce(Return(Applied(true)));
    EXPECT_CALL(*transport_, Execute(IsRelease("s2"), _)).WillOnce(Return(Applied(true)));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_THAT(session_->reported_invalid(), ::testing::ElementsAre("s1"));
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, ConsulUnreachableForLongerThanConfiguredFailsLock) {
  LockManagerOptions options = Options();
  options.max_unreachable = absl::Milliseconds(300);
  auto manager = NewManager(options);
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _))
      .WillRepeatedly(Return(consul::ConnectionError("connection refused")));
  const absl::Time start = absl::Now();
  absl::Status status = lock->Lock();
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("unreachable"));
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_FALSE(lock->IsHeldByCurrentThread());
}

TEST_F(LockManagerTest, SessionLossMarksTheHoldLostCallsListenersAndSkipsTheRelease) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Notification told;
  std::string told_name;
  lock->AddLostListener([&](const std::string& name, const absl::Status& reason) {
    told_name = name;
    told.Notify();
  });
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_FALSE(lock->lost());
  session_->Fire(InstanceSession::EventKind::kLost, "s1");
  EXPECT_TRUE(lock->lost());
  EXPECT_THAT(lock->lost_reason().message(), HasSubstr("s1"));
  ASSERT_TRUE(told.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(told_name, "a");
  absl::Status fenced = PersistIfHeld(*lock, "/meta/v", "1");  // refused without a request
  EXPECT_TRUE(absl::IsAborted(fenced)) << fenced;
  EXPECT_THAT(fenced.message(), HasSubstr("lock 'a'"));
  EXPECT_TRUE(absl::IsAborted(lock->Lock()));  // re-entry into a lost hold
  EXPECT_TRUE(lock->Unlock().ok());            // no release request: nothing to release
}

// Every hold of the process shares the instance session: a hold is told apart by the lock key's
// ModifyIndex at its acquisition, which its release and its fenced writes check.
TEST_F(LockManagerTest, ReleaseAndFencedWritesCheckTheIndexTheAcquireAnsweredWith) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  HttpRequest txn;
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsFencedWrite(), _))
      .WillOnce(Invoke([&](const HttpRequest& request, consul::Canceller*) {
        txn = request;
        return Response(200, R"({"Results":[],"Errors":null})");
      }));
  EXPECT_CALL(*transport_, Execute(IsReleaseAt("s1", kHoldIndex), _))
      .WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  ASSERT_TRUE(PersistIfHeld(*lock, "/meta/v", "7").ok());
  ASSERT_TRUE(lock->Unlock().ok());
  nlohmann::json ops = nlohmann::json::parse(txn.body);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0]["KV"]["Verb"], "check-index");
  EXPECT_EQ(ops[0]["KV"]["Key"], "ns/lock/a/");
  EXPECT_EQ(ops[0]["KV"]["Index"], kHoldIndex);
  // Delete, then set: the key ends persistent even if a session held it.
  EXPECT_EQ(ops[1]["KV"]["Verb"], "delete");
  EXPECT_EQ(ops[1]["KV"]["Key"], "ns/meta/v");
  EXPECT_EQ(ops[2]["KV"]["Verb"], "set");
  EXPECT_EQ(ops[2]["KV"]["Key"], "ns/meta/v");
  EXPECT_EQ(ops[2]["KV"]["Value"], "Nw==");  // base64 of "7"
}

TEST_F(LockManagerTest, FencedWriteRefusedByConsulIsAbortedNamingTheLockAndMarksItLost) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsFencedWrite(), _))
      .WillOnce(Return(Response(
          409, R"({"Results":null,"Errors":[{"OpIndex":0,"What":"failed session check"}]})")));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Status status = DeleteIfHeld(*lock, "/meta");
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("lock 'a'"));
  EXPECT_THAT(status.message(), HasSubstr("'/meta'"));
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(LockManagerTest, FencedWriteFromAThreadThatDoesNotHoldTheLockIsFailedPrecondition) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  absl::Status status = PersistIfHeld(*lock, "/meta/v", "1");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("lock 'a'"));
  EXPECT_TRUE(absl::IsInvalidArgument(PersistIfHeld(*lock, "no-slash", "1")));
}

TEST_F(LockManagerTest, WaitersQueueInArrivalOrder) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillRepeatedly(Return(Applied(true)));
  EXPECT_CALL(*transport_, Execute(IsRelease("s1"), _)).WillRepeatedly(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      ASSERT_TRUE(lock->Lock().ok());
      {
        absl::MutexLock guard(&mu);
        order.push_back(i);
      }
      ASSERT_TRUE(lock->Unlock().ok());
    });
    // The next thread starts only once this one has its ticket.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (lock->QueueLength() < i + 1 && absl::Now() < deadline)
      absl::SleepFor(absl::Milliseconds(1));
    ASSERT_EQ(lock->QueueLength(), i + 1);
  }
  ASSERT_TRUE(lock->Unlock().ok());
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(order, ::testing::ElementsAre(0, 1, 2, 3));
}

TEST_F(LockManagerTest, ClosingTheRepositoryWakesALocalWaiterWithAnError) {
  auto manager = NewManager();
  auto lock = LockA(*manager);
  EXPECT_CALL(*transport_, Execute(IsAcquire("s1"), _)).WillOnce(Return(Applied(true)));
  ASSERT_TRUE(lock->Lock().ok());
  absl::Status waiter;
  std::thread thread([&] { waiter = lock->Lock(); });
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (lock->QueueLength() < 1 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  session_->Close();
  thread.join();
  EXPECT_TRUE(absl::IsFailedPrecondition(waiter)) << waiter;
  EXPECT_THAT(waiter.message(), HasSubstr("closed"));
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lock->Unlock().ok());  // ends the hold locally, no request
  EXPECT_TRUE(absl::IsFailedPrecondition(manager->GetLock("b").status()));
}

TEST_F(LockManagerTest, OneManagerPerInstanceSession) {
  auto manager = NewManager();
  absl::StatusOr<std::unique_ptr<LockManager>> second = LockManager::Create(*session_, Options());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  manager.reset();
  EXPECT_EQ(session_->observer_count(), 0u);
  EXPECT_TRUE(LockManager::Create(*session_, Options()).ok());
}

TEST_F(LockManagerTest, GetLockSharesOneObjectPerCanonicalName) {
  auto manager = NewManager();
  auto a = manager->GetLock("x/y");
  auto b = manager->GetLock("/x/y");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ((*a)->consul_key(), "ns/lock/x/y/");
  EXPECT_TRUE(absl::IsInvalidArgument(manager->GetLock("x//y").status()));
}

}  // namespace
}  // namespace registry::lock
