// SPDX-License-Identifier: Apache-2.0
// tests/lock/fair_lock_test.cc
//
// The request sequence of the fair lock (lock/consul_fair_lock.h) against a strict gmock
// transport: registration and queue read in one txn, a wait on the predecessor only, re-reads
// when it goes, the owner key taken by the head, one release txn, and the removal of an entry
// whose call gave up.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lock/consul_fair_lock.h"
#include "lock/distributed_lock.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"
#include "tests/lock/lock_manager_fixture.h"

namespace registry::lock::testing {
namespace {

using ::testing::_;
using ::testing::InSequence;
using ::testing::Invoke;
using ::testing::Return;

constexpr char kPrefix[] = "ns/fair-queue/a/";
constexpr char kOwner[] = "ns/fair-lock/a/";

nlohmann::json EntryJson(const std::string& key, const std::string& session, uint64_t create,
                         uint64_t modify) {
  nlohmann::json entry = {
      {"LockIndex", 1},        {"Key", key},           {"Flags", 0}, {"Value", nullptr},
      {"CreateIndex", create}, {"ModifyIndex", modify}};
  if (!session.empty()) entry["Session"] = session;
  return entry;
}

// The registration: a txn "lock" of a new entry under the prefix with `session`, then
// "get-tree" of the prefix.
MATCHER_P(IsRegistration, session, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 2 && ops[0]["KV"]["Verb"] == "lock" &&
         absl::StartsWith(ops[0]["KV"]["Key"].get<std::string>(),
                          std::string(kPrefix) + session + ".") &&
         ops[0]["KV"]["Session"] == session && ops[1]["KV"]["Verb"] == "get-tree" &&
         ops[1]["KV"]["Key"] == kPrefix;
}
MATCHER_P(IsDeleteOf, key, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 1 && ops[0]["KV"]["Verb"] == "delete" &&
         ops[0]["KV"]["Key"] == key;
}
bool IsEntryOfS1(const nlohmann::json& key) {
  return key.is_string() && absl::StartsWith(key.get<std::string>(), std::string(kPrefix) + "s1.");
}
// A delete of an entry of session "s1".
MATCHER(IsOwnDelete, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 1 && ops[0]["KV"]["Verb"] == "delete" &&
         IsEntryOfS1(ops[0]["KV"]["Key"]);
}
// The head of the queue takes the owner key: a txn "lock" of it with "s1".
MATCHER(IsOwnerLock, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 1 && ops[0]["KV"]["Verb"] == "lock" &&
         ops[0]["KV"]["Key"] == kOwner && ops[0]["KV"]["Session"] == "s1";
}
// The release: check-index + unlock of the owner key, delete of the entry, in one txn.
MATCHER(IsFairRelease, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 3 && ops[0]["KV"]["Verb"] == "check-index" &&
         ops[0]["KV"]["Key"] == kOwner && ops[1]["KV"]["Verb"] == "unlock" &&
         ops[1]["KV"]["Key"] == kOwner && ops[2]["KV"]["Verb"] == "delete" &&
         IsEntryOfS1(ops[2]["KV"]["Key"]);
}
MATCHER(IsOwnerRead, "") {
  return arg.method == HttpMethod::kGet && arg.path == std::string("/v1/kv/") + kOwner &&
         arg.FindParam("index") == nullptr;
}

// The owner key's answer to IsOwnerLock: taken, at ModifyIndex 9.
HttpResponse OwnerTaken() {
  nlohmann::json entry = EntryJson(kOwner, "s1", 1, 9);
  return Response(200,
                  nlohmann::json({{"Results", {{{"KV", entry}}}}, {"Errors", nullptr}}).dump());
}
HttpResponse TxnOk() { return Response(200, R"({"Results":[],"Errors":null})"); }
MATCHER_P2(IsBlockingReadOf, key, index, "") {
  const std::string* sent = arg.FindParam("index");
  return arg.method == HttpMethod::kGet && arg.path == "/v1/kv/" + std::string(key) &&
         sent != nullptr && *sent == index;
}
MATCHER(IsQueueRead, "") {
  return arg.method == HttpMethod::kGet && arg.path == std::string("/v1/kv/") + kPrefix &&
         arg.FindParam("recurse") != nullptr;
}

class FairLockTest : public LockManagerTest {
 protected:
  std::shared_ptr<DistributedLock> FairA(LockManager& manager) {
    absl::StatusOr<std::shared_ptr<DistributedLock>> lock = manager.GetFairLock("a");
    EXPECT_TRUE(lock.ok()) << lock.status();
    return lock.ok() ? *lock : nullptr;
  }

  // Answers a registration: the new entry (created at `create`) and the queue, which holds
  // `ahead` and then the new entry. Records the entry's key in `entry_`.
  auto Registered(std::vector<nlohmann::json> ahead, uint64_t create) {
    return [this, ahead, create](const HttpRequest& request, consul::Canceller*) {
      const nlohmann::json ops = TxnOps(request);
      entry_ = ops[0]["KV"]["Key"].get<std::string>();
      const std::string session = ops[0]["KV"]["Session"].get<std::string>();
      nlohmann::json results = nlohmann::json::array();
      results.push_back({{"KV", EntryJson(entry_, session, create, create)}});
      for (const nlohmann::json& entry : ahead) results.push_back({{"KV", entry}});
      results.push_back({{"KV", EntryJson(entry_, session, create, create)}});
      return Response(200, nlohmann::json({{"Results", results}, {"Errors", nullptr}}).dump());
    };
  }

  // A listing of the queue: `entries`, then this test's entry (created at `create`) unless 0.
  HttpResponse Listing(std::vector<nlohmann::json> entries, uint64_t create, uint64_t index) {
    nlohmann::json listed = nlohmann::json::array();
    for (const nlohmann::json& entry : entries) listed.push_back(entry);
    if (create != 0) listed.push_back(EntryJson(entry_, "s1", create, create));
    return ReadResponse(200, listed.dump(), index);
  }

  std::string entry_;
};

const std::string kOther1 = std::string(kPrefix) + "other1.0000000000000001/";
const std::string kOther2 = std::string(kPrefix) + "other2.0000000000000002/";

TEST_F(FairLockTest, UncontendedCycleIsARegistrationTheOwnerKeyAndOneRelease) {
  auto manager = NewManager();
  auto lock = FairA(*manager);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _)).WillOnce(Invoke(Registered({}, 5)));
    EXPECT_CALL(*transport_, Execute(IsOwnerLock(), _)).WillOnce(Return(OwnerTaken()));
    EXPECT_CALL(*transport_, Execute(IsFairRelease(), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_TRUE(lock->IsHeldByCurrentThread());
  EXPECT_EQ(TwoTierOf(*lock).consul_key(), kOwner);
  ASSERT_TRUE(lock->Unlock().ok());
  EXPECT_TRUE(absl::StartsWith(entry_, std::string(kPrefix) + "s1."));
  EXPECT_TRUE(absl::EndsWith(entry_, "/"));
}

TEST_F(FairLockTest, WaiterBlocksOnItsPredecessorOnlyAndReReadsTheQueueWhenItGoes) {
  auto manager = NewManager();
  auto lock = FairA(*manager);
  {
    InSequence sequence;
    // Queue: other1, other2, us. Only other2, the predecessor, is waited on.
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _))
        .WillOnce(Invoke(
            Registered({EntryJson(kOther1, "o1", 3, 3), EntryJson(kOther2, "o2", 4, 4)}, 5)));
    EXPECT_CALL(*transport_, Execute(IsBlockingReadOf(kOther2, "4"), _))
        .WillOnce(Return(ReadResponse(404, "", 6)));  // other2 gave up
    // other1 still holds: wait on it now.
    EXPECT_CALL(*transport_, Execute(IsQueueRead(), _)).WillOnce(Invoke([&](auto&&...) {
      return Listing({EntryJson(kOther1, "o1", 3, 3)}, 5, 6);
    }));
    EXPECT_CALL(*transport_, Execute(IsBlockingReadOf(kOther1, "3"), _))
        .WillOnce(Return(ReadResponse(404, "", 7)));
    EXPECT_CALL(*transport_, Execute(IsQueueRead(), _)).WillOnce(Invoke([&](auto&&...) {
      return Listing({}, 5, 7);
    }));
    EXPECT_CALL(*transport_, Execute(IsOwnerLock(), _)).WillOnce(Return(OwnerTaken()));
    EXPECT_CALL(*transport_, Execute(IsFairRelease(), _)).WillOnce(Return(TxnOk()));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::Seconds(5));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_TRUE(*acquired);
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(FairLockTest, TryLockThatGivesUpRemovesItsEntry) {
  auto manager = NewManager();
  auto lock = FairA(*manager);
  absl::Notification removed;
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _))
        .WillOnce(Invoke(Registered({EntryJson(kOther1, "o1", 3, 3)}, 5)));
    // Deleted twice: a registration cut by a deadline may still land after the first. Then
    // two looks at the owner key, which an acquire cut the same way could have bound.
    EXPECT_CALL(*transport_, Execute(IsOwnDelete(), _)).Times(2).WillRepeatedly(Return(TxnOk()));
    EXPECT_CALL(*transport_, Execute(IsOwnerRead(), _))
        .WillOnce(Return(ReadResponse(404, "", 9)))
        .WillOnce(Invoke([&](auto&&...) {
          removed.Notify();
          return ReadResponse(404, "", 9);
        }));
  }
  absl::StatusOr<bool> acquired = lock->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  EXPECT_TRUE(removed.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(FairLockTest, EntriesOfItsOwnSessionAheadOfItAreRemovedNotWaitedOn) {
  auto manager = NewManager();
  auto lock = FairA(*manager);
  const std::string stale = std::string(kPrefix) + "s1.00000000000000aa/";
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _))
        .WillOnce(Invoke(Registered({EntryJson(stale, "s1", 2, 2)}, 5)));
    EXPECT_CALL(*transport_, Execute(IsDeleteOf(stale), _)).WillOnce(Return(TxnOk()));
    EXPECT_CALL(*transport_, Execute(IsQueueRead(), _)).WillOnce(Invoke([&](auto&&...) {
      return Listing({}, 5, 6);
    }));
    EXPECT_CALL(*transport_, Execute(IsOwnerLock(), _)).WillOnce(Return(OwnerTaken()));
    EXPECT_CALL(*transport_, Execute(IsFairRelease(), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(FairLockTest, AnEntryThatVanishedIsReplacedByANewOneAtTheBack) {
  auto manager = NewManager();
  auto lock = FairA(*manager);
  std::string first_entry;
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _))
        .WillOnce(Invoke(Registered({EntryJson(kOther1, "o1", 3, 3)}, 5)));
    EXPECT_CALL(*transport_, Execute(IsBlockingReadOf(kOther1, "3"), _))
        .WillOnce(Return(ReadResponse(404, "", 7)));
    // A recursive delete took the whole queue, this call's entry with it.
    EXPECT_CALL(*transport_, Execute(IsQueueRead(), _)).WillOnce(Invoke([&](auto&&...) {
      first_entry = entry_;
      return Listing({}, 0, 7);
    }));
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _)).WillOnce(Invoke(Registered({}, 8)));
    EXPECT_CALL(*transport_, Execute(IsOwnerLock(), _)).WillOnce(Return(OwnerTaken()));
    EXPECT_CALL(*transport_, Execute(IsFairRelease(), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_NE(entry_, first_entry);
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST_F(FairLockTest, ALostHoldStillTakesItsEntryOutOfTheQueue) {
  auto manager = NewManager();
  auto lock = FairA(*manager);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _)).WillOnce(Invoke(Registered({}, 5)));
    EXPECT_CALL(*transport_, Execute(IsOwnerLock(), _)).WillOnce(Return(OwnerTaken()));
    // No release of the owner key (the hold was lost), but the entry must not keep the next
    // contender waiting while this instance's session lives on.
    EXPECT_CALL(*transport_, Execute(IsOwnDelete(), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(lock->Lock().ok());
  session_->Fire(InstanceSession::EventKind::kLost, "s1");
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lock->Unlock().ok());
}

TEST(FairQueueTest, KeepsBoundEntriesOneSegmentBelowThePrefixInCreationOrder) {
  auto entry = [](std::string key, std::string session, uint64_t create) {
    consul::DirEntry e;
    e.key = std::move(key);
    e.session = std::move(session);
    e.create_index = create;
    e.modify_index = create;
    return e;
  };
  const std::vector<consul::DirEntry> listed = {
      entry("ns/fair-lock/a/s2.2/", "s2", 9),    // second
      entry("ns/fair-lock/a/s1.1/", "s1", 4),    // first
      entry("ns/fair-lock/a/b/s3.3/", "s3", 1),  // the fair lock "a/b"'s entry
      entry("ns/fair-lock/a/s4.4/", "", 2),      // not bound to a session
      entry("ns/fair-lock/a/s5.5", "s5", 3),     // not a folder key
      entry("ns/fair-lock/ab/s6.6/", "s6", 0)};  // another lock
  const std::vector<consul::DirEntry> queue = FairQueue("ns/fair-lock/a/", listed);
  ASSERT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue[0].key, "ns/fair-lock/a/s1.1/");
  EXPECT_EQ(queue[1].key, "ns/fair-lock/a/s2.2/");
}

}  // namespace
}  // namespace registry::lock::testing
