// tests/lock/fair_lock_test.cc
//
// The request sequence of the fair lock (lock/consul_fair_lock.h) against a strict gmock
// transport: registration and queue read in one txn, a wait on the predecessor only, re-reads
// when it goes, and the removal of an entry whose call gave up.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lock/consul_fair_lock.h"
#include "lock/lock_manager.h"
#include "tests/lock/lock_manager_fixture.h"

namespace registry::lock::testing {
namespace {

using ::testing::_;
using ::testing::InSequence;
using ::testing::Invoke;
using ::testing::Return;

constexpr char kPrefix[] = "ns/fair-lock/a/";

nlohmann::json EntryJson(const std::string& key, const std::string& session, uint64_t create,
                         uint64_t modify) {
  nlohmann::json entry = {{"LockIndex", 1},   {"Key", key},             {"Flags", 0},
                          {"Value", nullptr}, {"CreateIndex", create}, {"ModifyIndex", modify}};
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
// A delete of an entry of session "s1".
MATCHER(IsOwnDelete, "") {
  const nlohmann::json ops = TxnOps(arg);
  return ops.is_array() && ops.size() == 1 && ops[0]["KV"]["Verb"] == "delete" &&
         absl::StartsWith(ops[0]["KV"]["Key"].get<std::string>(), std::string(kPrefix) + "s1.");
}
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

TEST_F(FairLockTest, UncontendedCycleIsOneRegistrationAndOneDelete) {
  auto manager = NewManager();
  auto lock = FairA(*manager);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsRegistration("s1"), _)).WillOnce(Invoke(Registered({}, 5)));
    EXPECT_CALL(*transport_, Execute(IsOwnDelete(), _))
        .WillOnce(Return(Response(200, R"({"Results":[],"Errors":null})")));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_TRUE(lock->IsHeldByCurrentThread());
  EXPECT_EQ(lock->consul_key(), kPrefix);
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
        .WillOnce(Invoke(Registered(
            {EntryJson(kOther1, "o1", 3, 3), EntryJson(kOther2, "o2", 4, 4)}, 5)));
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
    EXPECT_CALL(*transport_, Execute(IsOwnDelete(), _))
        .WillOnce(Return(Response(200, R"({"Results":[],"Errors":null})")));
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
    // Deleted twice: a registration cut by a deadline may still land after the first.
    EXPECT_CALL(*transport_, Execute(IsOwnDelete(), _))
        .WillOnce(Return(Response(200, R"({"Results":[],"Errors":null})")))
        .WillOnce(Invoke([&](auto&&...) {
          removed.Notify();
          return Response(200, R"({"Results":[],"Errors":null})");
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
    EXPECT_CALL(*transport_, Execute(IsDeleteOf(stale), _))
        .WillOnce(Return(Response(200, R"({"Results":[],"Errors":null})")));
    EXPECT_CALL(*transport_, Execute(IsQueueRead(), _)).WillOnce(Invoke([&](auto&&...) {
      return Listing({}, 5, 6);
    }));
    EXPECT_CALL(*transport_, Execute(IsOwnDelete(), _))
        .WillOnce(Return(Response(200, R"({"Results":[],"Errors":null})")));
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
    EXPECT_CALL(*transport_, Execute(IsOwnDelete(), _))
        .WillOnce(Return(Response(200, R"({"Results":[],"Errors":null})")));
  }
  ASSERT_TRUE(lock->Lock().ok());
  EXPECT_NE(entry_, first_entry);
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
      entry("ns/fair-lock/a/s2.2/", "s2", 9),     // second
      entry("ns/fair-lock/a/s1.1/", "s1", 4),     // first
      entry("ns/fair-lock/a/b/s3.3/", "s3", 1),   // the fair lock "a/b"'s entry
      entry("ns/fair-lock/a/s4.4/", "", 2),       // not bound to a session
      entry("ns/fair-lock/a/s5.5", "s5", 3),      // not a folder key
      entry("ns/fair-lock/ab/s6.6/", "s6", 0)};  // another lock
  const std::vector<consul::DirEntry> queue = FairQueue("ns/fair-lock/a/", listed);
  ASSERT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue[0].key, "ns/fair-lock/a/s1.1/");
  EXPECT_EQ(queue[1].key, "ns/fair-lock/a/s2.2/");
}

}  // namespace
}  // namespace registry::lock::testing
