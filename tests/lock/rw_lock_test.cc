// SPDX-License-Identifier: Apache-2.0
// tests/lock/rw_lock_test.cc
//
// The request sequences of the read/write lock (lock/consul_rw_lock.h) against a strict gmock
// transport: one read, one take and one delete when uncontended; a writer that registers, then
// waits for the holders ahead of it and prunes them; readers held back by a waiting writer; an
// upgrade refused without a request.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lock/consul_rw_lock.h"
#include "lock/lock_manager.h"
#include "lock/two_tier_lock.h"
#include "tests/lock/record_lock_fixture.h"

namespace registry::lock::testing {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Invoke;
using ::testing::Return;

constexpr char kPrefix[] = "ns/rwlock/a/";
constexpr char kReader[] = "o1.0000000000000001";
const std::string kReaderKey = std::string(kPrefix) + kReader + "/";

nlohmann::json RecordJson(const RwRecord& record, uint64_t index) {
  return KeyJson(kPrefix, "", index, RwRecordJson(record));
}

// A txn locking an entry of "s1", with `prunes` lock + delete pairs, then the record's cas.
MATCHER_P(IsTakeWith, prunes, "") {
  const nlohmann::json ops = TxnOps(arg);
  if (!ops.is_array() || ops.size() != 2u + 2u * static_cast<size_t>(prunes)) return false;
  return ops[0]["KV"]["Verb"] == "lock" && ops[0]["KV"]["Session"] == "s1" &&
         absl::StartsWith(ops[0]["KV"]["Key"].get<std::string>(), std::string(kPrefix) + "s1.") &&
         ops.back()["KV"]["Verb"] == "cas" && ops.back()["KV"]["Key"] == kPrefix;
}

class RwLockTest : public LockManagerTest {
 protected:
  // Answers a txn that locks the entry: committed, the entry at ModifyIndex 9; keeps the
  // record written.
  auto Committed() {
    return [this](const HttpRequest& request, consul::Canceller*) {
      const nlohmann::json ops = TxnOps(request);
      entry_ = ops[0]["KV"]["Key"].get<std::string>();
      records_.push_back(*ParseRwRecord(WrittenRecord(ops)));
      return EntryLocked(entry_);
    };
  }
  std::string EntryName() const {
    return entry_.substr(std::string(kPrefix).size(), entry_.size() - sizeof(kPrefix));
  }

  std::string entry_;
  std::vector<RwRecord> records_;
};

TEST_F(RwLockTest, UncontendedReadIsAReadATakeAndADelete) {
  auto manager = NewManager();
  auto read = manager->GetReadLock("a").value();
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _)).WillOnce(Return(Tree({}, 4)));
    EXPECT_CALL(*transport_, Execute(IsTakeWith(0), _)).WillOnce(Invoke(Committed()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(read->Lock().ok());
  EXPECT_EQ(TwoTierOf(*read).consul_key(), kPrefix);
  ASSERT_EQ(records_.size(), 1u);
  EXPECT_THAT(records_[0].readers, ElementsAre(EntryName()));
  EXPECT_EQ(records_[0].writer, "");
  ASSERT_TRUE(read->Unlock().ok());
}

TEST_F(RwLockTest, WriterRegistersWaitsForTheReaderAheadAndPrunesIt) {
  auto manager = NewManager();
  auto write = manager->GetWriteLock("a").value();
  const nlohmann::json reader_entry = KeyJson(kReaderKey, "o1", 5);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
        .WillOnce(Return(Tree({RecordJson({"", {kReader}, {}}, 5), reader_entry}, 5)));
    // Registered: its entry, and its name in "Waiting" (which holds back later readers); a
    // read then gives the index to wait on.
    EXPECT_CALL(*transport_, Execute(IsTakeWith(0), _)).WillOnce(Invoke(Committed()));
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _)).WillOnce(Invoke([&](auto&&...) {
      return Tree(
          {RecordJson({"", {kReader}, {EntryName()}}, 6), reader_entry, KeyJson(entry_, "s1", 6)},
          6);
    }));
    EXPECT_CALL(*transport_, Execute(IsBlockingTreeReadOf(kPrefix, "6"), _))
        .WillOnce(Invoke([&](auto&&...) {
          // The reader left: its entry is gone, the record still names it.
          return Tree({RecordJson({"", {kReader}, {EntryName()}}, 6), KeyJson(entry_, "s1", 6)}, 7);
        }));
    EXPECT_CALL(*transport_, Execute(IsTakeWith(1), _)).WillOnce(Invoke(Committed()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  absl::StatusOr<bool> acquired = write->TryLock(absl::Seconds(5));
  ASSERT_TRUE(acquired.ok() && *acquired) << acquired.status();
  ASSERT_EQ(records_.size(), 2u);
  EXPECT_THAT(records_[0].waiting, ElementsAre(EntryName()));
  EXPECT_EQ(records_[1].writer, EntryName());
  EXPECT_TRUE(records_[1].readers.empty());
  EXPECT_TRUE(records_[1].waiting.empty());
  EXPECT_TRUE(write->Unlock().ok());
}

TEST_F(RwLockTest, ReaderWaitsBehindAWaitingWriter) {
  auto manager = NewManager();
  auto read = manager->GetReadLock("a").value();
  const std::string writer = "o2.0000000000000002";
  const nlohmann::json writer_entry = KeyJson(std::string(kPrefix) + writer + "/", "o2", 6);
  const nlohmann::json reader_entry = KeyJson(kReaderKey, "o1", 5);
  {
    InSequence sequence;
    // Only a reader holds, but a writer waits: this reader waits too.
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _))
        .WillOnce(Return(
            Tree({RecordJson({"", {kReader}, {writer}}, 6), reader_entry, writer_entry}, 6)));
    // Nothing changes: the server answers each blocking read when its wait is over.
    EXPECT_CALL(*transport_, Execute(IsBlockingTreeReadOf(kPrefix, "6"), _))
        .WillRepeatedly(Invoke([&](auto&&...) {
          absl::SleepFor(absl::Milliseconds(20));
          return Tree({RecordJson({"", {kReader}, {writer}}, 6), reader_entry, writer_entry}, 6);
        }));
  }
  absl::StatusOr<bool> acquired = read->TryLock(absl::Milliseconds(100));
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
}

TEST_F(RwLockTest, AThreadHoldingOneSideIsRefusedTheOtherWithoutARequest) {
  auto manager = NewManager();
  auto read = manager->GetReadLock("a").value();
  auto write = manager->GetWriteLock("/a").value();
  EXPECT_EQ(read->capacity(), std::numeric_limits<int>::max());
  EXPECT_EQ(write->capacity(), 1);
  {
    InSequence sequence;
    EXPECT_CALL(*transport_, Execute(IsTreeReadOf(kPrefix), _)).WillOnce(Return(Tree({}, 4)));
    EXPECT_CALL(*transport_, Execute(IsTakeWith(0), _)).WillOnce(Invoke(Committed()));
    EXPECT_CALL(*transport_, Execute(IsEntryDeleteUnder(kPrefix), _)).WillOnce(Return(TxnOk()));
  }
  ASSERT_TRUE(read->Lock().ok());
  absl::StatusOr<bool> upgrade = write->TryLock(absl::Seconds(1));
  EXPECT_EQ(upgrade.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(upgrade.status().message(),
              HasSubstr("write lock 'a': this thread holds the read lock"));
  EXPECT_TRUE(read->Lock().ok());  // re-entry into the same side
  EXPECT_TRUE(read->Unlock().ok());
  EXPECT_TRUE(read->Unlock().ok());
}

TEST(RwRecordTest, RoundTripsAndRefusesWhatIsNotARecord) {
  const RwRecord record{"w.1", {"r.1", "r.2"}, {"w.2", "w.3"}};
  absl::StatusOr<RwRecord> parsed = ParseRwRecord(RwRecordJson(record));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->writer, "w.1");
  EXPECT_EQ(parsed->readers, record.readers);
  EXPECT_EQ(parsed->waiting, record.waiting);  // in registration order
  EXPECT_TRUE(ParseRwRecord("{}").ok());
  for (const char* bad : {"", "[]", R"({"Writer":1})", R"({"Readers":[]})", R"({"Waiting":{}})",
                          R"({"Waiting":[1]})"}) {
    EXPECT_EQ(ParseRwRecord(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace registry::lock::testing
