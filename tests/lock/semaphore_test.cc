// SPDX-License-Identifier: Apache-2.0
// tests/lock/semaphore_test.cc
//
// The request sequence of the semaphore (lock/consul_semaphore.h) against a strict gmock
// transport: one read, one take txn (entry lock + record check-and-set) and one delete when
// uncontended; a wait on the tree's index when full; dead holders pruned only through a `lock`
// of their key (refused under lock-delay); the limit checked against the record.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lock/consul_semaphore.h"
#include "lock/distributed_lock.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"
#include "tests/lock/record_lock_fixture.h"

namespace registry::lock::testing {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Invoke;
using ::testing::Return;

constexpr char kPrefix[] = "ns/semaphore/a/";
const std::string kOther = std::string(kPrefix) + "o1.0000000000000001/";

// The record with `limit` and `holders` (entry names), at ModifyIndex `index`.
nlohmann::json RecordJson(int limit, std::vector<std::string> holders, uint64_t index) {
  return KeyJson(kPrefix, "", index, SemaphoreRecordJson({limit, std::move(holders)}));
}

// A take: lock of an entry of "s1", `prunes` pairs of lock + delete, then the record's
// check-and-set at `cas_index` naming the entry among `limit` holders at most.
MATCHER_P2(IsTake, prunes, cas_index, "") {
  const nlohmann::json ops = TxnOps(arg);
  if (!ops.is_array() || ops.size() != 2u + 2u * prunes) return false;
  const nlohmann::json& lock = ops[0]["KV"];
  if (lock["Verb"] != "lock" || lock["Session"] != "s1" ||
      !absl::StartsWith(lock["Key"].get<std::string>(), std::string(kPrefix) + "s1.")) {
    return false;
  }
  for (size_t i = 0; i < static_cast<size_t>(prunes); ++i) {
    const nlohmann::json& pruned = ops[1 + 2 * i]["KV"];
    if (pruned["Verb"] != "lock" || ops[2 + 2 * i]["KV"]["Verb"] != "delete" ||
        ops[2 + 2 * i]["KV"]["Key"] != pruned["Key"]) {
      return false;
    }
  }
  const nlohmann::json& cas = ops.back()["KV"];
  return cas["Verb"] == "cas" && cas["Key"] == kPrefix && cas["Index"] == cas_index;
}

class SemaphoreTest : public LockManagerTest {
 protected:
  std::shared_ptr<DistributedLock> SemaphoreA(LockManager& manager, int limit) {
    absl::StatusOr<std::shared_ptr<DistributedLock>> semaphore = manager.GetSemaphore("a", limit);
    EXPECT_TRUE(semaphore.ok()) << semaphore.status();
    return semaphore.ok() ? *semaphore : nullptr;
  }

  // Answers a take: committed, the entry at ModifyIndex 9; records the entry and the record
  // written.
  auto Taken() {
    return [this](const HttpRequest& request, consul::Canceller*) {
      const nlohmann::json ops = TxnOps(request);
      entry_ = ops[0]["KV"]["Key"].get<std::string>();
      record_ = *ParseSemaphoreRecord(WrittenRecord(ops));
      return EntryLocked(entry_);
    };
  }
  static HttpResponse Refused(size_t op, const std::string& what) {
    return Response(
        409, nlohmann::json({{"Results", nullptr}, {"Errors", {{{"OpIndex", op}, {"What", what}}}}})
                 .dump());
  }

  std::string entry_;
  SemaphoreRecord record_;
};

TEST_F(SemaphoreTest, UncontendedCycleIsAReadATakeAndADelete) {
  auto manager = NewManager();
  auto semaphore = SemaphoreA(*manager, 2);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _)).WillOnce(Return(Tree({}, 4)));
    EXPECT_CALL(*transport_, Execute(IsTake(0, 0), _)).WillOnce(Invoke(Taken()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(semaphore->Lock().ok());
  EXPECT_EQ(semaphore->capacity(), 2);
  EXPECT_EQ(TwoTierOf(*semaphore).consul_key(), kPrefix);
  EXPECT_EQ(record_.limit, 2);
  ASSERT_EQ(record_.holders.size(), 1u);
  EXPECT_EQ(std::string(kPrefix) + record_.holders[0] + "/", entry_);
  ASSERT_TRUE(semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, FullSemaphoreWaitsOnTheTreeAndPrunesTheHolderThatLeft) {
  auto manager = NewManager();
  auto semaphore = SemaphoreA(*manager, 1);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
        .WillOnce(
            Return(Tree({RecordJson(1, {"o1.0000000000000001"}, 5), KeyJson(kOther, "o1", 6)}, 6)));
    // The holder released: its entry is gone, the record still names it.
    EXPECT_CALL(*transport_, Execute(IsBlockingTreeReadOf(kPrefix, "6"), _))
        .WillOnce(Return(Tree({RecordJson(1, {"o1.0000000000000001"}, 5)}, 8)));
    EXPECT_CALL(*transport_, Execute(IsTake(1, 5), _)).WillOnce(Invoke(Taken()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  absl::StatusOr<bool> acquired = semaphore->TryLock(absl::Seconds(5));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  ASSERT_TRUE(*acquired);
  ASSERT_EQ(record_.holders.size(), 1u);  // o1 pruned
  EXPECT_TRUE(absl::StartsWith(record_.holders[0], "s1."));
  EXPECT_TRUE(semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, PruningUnderLockDelayIsRetriedNotForced) {
  auto manager = NewManager();
  auto semaphore = SemaphoreA(*manager, 1);
  const nlohmann::json dead_record = RecordJson(1, {"o1.0000000000000001"}, 5);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
        .WillOnce(Return(Tree({dead_record}, 7)));
    // The dead holder's key is under lock-delay: it may not know it lost its permit yet.
    EXPECT_CALL(*transport_, Execute(IsTake(1, 5), _))
        .WillOnce(Return(Refused(1, "failed to lock key \"x\" due to lock delay")));
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
        .WillOnce(Return(Tree({dead_record}, 7)));
    EXPECT_CALL(*transport_, Execute(IsTake(1, 5), _)).WillOnce(Invoke(Taken()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(semaphore->Lock().ok());
  EXPECT_TRUE(semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, RecordChangedUnderTheTakeIsReadAgainAtOnce) {
  auto manager = NewManager();
  auto semaphore = SemaphoreA(*manager, 2);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _)).WillOnce(Return(Tree({}, 4)));
    EXPECT_CALL(*transport_, Execute(IsTake(0, 0), _))
        .WillOnce(Return(Refused(1, "failed to set key: index is stale")));
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
        .WillOnce(
            Return(Tree({RecordJson(2, {"o1.0000000000000001"}, 5), KeyJson(kOther, "o1", 5)}, 5)));
    EXPECT_CALL(*transport_, Execute(IsTake(0, 5), _)).WillOnce(Invoke(Taken()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(semaphore->Lock().ok());
  EXPECT_EQ(record_.holders.size(), 2u);
  EXPECT_TRUE(semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, LimitThatDisagreesWithALiveRecordNamesBoth) {
  auto manager = NewManager();
  auto semaphore = SemaphoreA(*manager, 2);
  EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
      .WillOnce(
          Return(Tree({RecordJson(3, {"o1.0000000000000001"}, 5), KeyJson(kOther, "o1", 5)}, 5)));
  absl::StatusOr<bool> acquired = semaphore->TryLock(absl::Seconds(5));
  ASSERT_FALSE(acquired.ok());
  EXPECT_EQ(acquired.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(acquired.status().message(), HasSubstr("semaphore 'a'"));
  EXPECT_THAT(acquired.status().message(), HasSubstr("limit in Consul is 3"));
  EXPECT_THAT(acquired.status().message(), HasSubstr("asked for 2"));
  EXPECT_FALSE(semaphore->IsHeldByCurrentThread());
}

TEST_F(SemaphoreTest, LimitOfARecordWithoutLiveHoldersIsReplaced) {
  auto manager = NewManager();
  auto semaphore = SemaphoreA(*manager, 2);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
        .WillOnce(Return(Tree({RecordJson(3, {"o1.0000000000000001"}, 5)}, 5)));
    EXPECT_CALL(*transport_, Execute(IsTake(0, 5), _)).WillOnce(Invoke(Taken()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(semaphore->Lock().ok());
  EXPECT_EQ(record_.limit, 2);
  EXPECT_TRUE(semaphore->Unlock().ok());
}

TEST_F(SemaphoreTest, ARecordThatIsNotASemaphoresIsAClearError) {
  auto manager = NewManager();
  auto semaphore = SemaphoreA(*manager, 2);
  EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
      .WillOnce(Return(Tree({KeyJson(kPrefix, "", 5, "not json")}, 5)));
  absl::Status status = semaphore->Lock();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("'ns/semaphore/a/' is not a semaphore's"));
}

TEST_F(SemaphoreTest, GetSemaphoreChecksTheLimit) {
  auto manager = NewManager();
  EXPECT_EQ(manager->GetSemaphore("a", 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager->GetSemaphore("a", kMaxSemaphoreLimit + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(manager->GetSemaphore("a", 2).ok());
  absl::Status other = manager->GetSemaphore("/a", 3).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("limit 2, asked for 3"));
  // A lock of the same name is another object, with other keys.
  auto lock = LockA(*manager);
  EXPECT_NE(lock.get(), manager->GetSemaphore("a", 2)->get());
  EXPECT_EQ(lock->capacity(), 1);
}

TEST(SemaphoreRecordTest, RoundTripsAndRefusesWhatIsNotARecord) {
  const SemaphoreRecord record{3, {"s1.01", "s2.02"}};
  absl::StatusOr<SemaphoreRecord> parsed = ParseSemaphoreRecord(SemaphoreRecordJson(record));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->limit, 3);
  EXPECT_EQ(parsed->holders, record.holders);
  // The Go api's form, with a null Holders.
  EXPECT_TRUE(ParseSemaphoreRecord(R"({"Limit":2,"Holders":null})").ok());
  for (const char* bad : {"", "[]", R"({"Holders":{}})", R"({"Limit":0})", R"({"Limit":1.5})",
                          R"({"Limit":5000})", R"({"Limit":2,"Holders":[]})"}) {
    EXPECT_EQ(ParseSemaphoreRecord(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace registry::lock::testing
