// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_batch_test.cc
//
// PersistBatch: many persistent keys in few transactions, every entry checked before anything
// is written, and a failure that says which prefix of the batch is written.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/repository/repository_fixture.h"

namespace registry::testing {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

using RepositoryBatchTest = RepositoryTest;
// Request counts: the dev server's.
class RepositoryBatchFaultsTest : public DevServerOnly<RepositoryTest> {};

std::vector<Repository::KeyValue> Entries(const std::string& prefix, int count) {
  std::vector<Repository::KeyValue> entries;
  for (int i = 0; i < count; ++i) {
    entries.emplace_back(absl::StrCat(prefix, "/t", i), absl::StrCat("{\"table\":", i, "}"));
  }
  return entries;
}

TEST_F(RepositoryBatchTest, EveryEntryIsPersistedAndAnEphemeralKeyBecomesPersistent) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/schema/t7", "ephemeral").ok());
  std::vector<Repository::KeyValue> entries = Entries("/schema", 100);
  entries.emplace_back("/schema/t3", "last wins");
  size_t written = 0;
  ASSERT_EQ(repository->PersistBatch(entries, &written), absl::OkStatus());
  EXPECT_EQ(written, entries.size());
  EXPECT_THAT(*repository->Get("/schema/t0"), Optional(std::string("{\"table\":0}")));
  EXPECT_THAT(*repository->Get("/schema/t99"), Optional(std::string("{\"table\":99}")));
  EXPECT_THAT(*repository->Get("/schema/t3"), Optional(std::string("last wins")));
  EXPECT_THAT(*repository->Get("/schema/t7"), Optional(std::string("{\"table\":7}")));
  EXPECT_EQ(HolderOf("ns/schema/t7"), "") << "a persisted key belongs to no session";
  EXPECT_EQ(repository->GetChildrenKeys("/schema")->size(), 100u);
  ASSERT_TRUE(repository->Close().ok());  // the instance's session goes; persistent keys stay
  EXPECT_THAT(*NewRepository()->Get("/schema/t7"), Optional(std::string("{\"table\":7}")));
}

TEST_F(RepositoryBatchTest, ABadEntryFailsTheBatchNamingItBeforeAnythingIsWritten) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  std::vector<Repository::KeyValue> entries = Entries("/bad", 5);
  entries[3].first = "/bad/../t3";
  size_t written = 99;
  absl::Status status = repository->PersistBatch(entries, &written);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("/bad/../t3"));
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(*repository->Get("/bad/t0"), std::nullopt);

  entries = Entries("/big", 3);
  entries[1].second = std::string(512 * 1024 + 1, 'x');
  status = repository->PersistBatch(entries, &written);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("/big/t1"), HasSubstr("524289 bytes")));
  EXPECT_EQ(*repository->Get("/big/t0"), std::nullopt);
}

// Consul 1.8 takes 64 operations per transaction: told 128, the batch fails at the first
// transaction past 64, and says which prefix is written.
TEST_F(RepositoryBatchTest, ATransactionTheServerRefusesEndsTheBatchNamingTheFirstEntryNotWritten) {
  if (!real_consul()) {
    GTEST_SKIP() << "the dev server takes 128 operations per transaction, as Consul 1.14+ does";
  }
  ConsulRepositoryOptions options = Options();
  options.txn_max_operations = 128;
  std::unique_ptr<ConsulRepository> repository = NewRepository(options);
  // Ten small keys, a value that needs a transaction of its own, then 128 keys (operations).
  std::vector<Repository::KeyValue> entries = Entries("/split", 10);
  entries.emplace_back("/split/huge", std::string(390 * 1024, 'h'));
  for (const auto& entry : Entries("/split/more", 128)) entries.push_back(entry);
  size_t written = 0;
  absl::Status status = repository->PersistBatch(entries, &written);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(written, 11u);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("/split/more/t0"), HasSubstr("entry 11 of 139"), HasSubstr("64")));
  EXPECT_THAT(*repository->Get("/split/t9"), Optional(std::string("{\"table\":9}")));
  EXPECT_EQ(repository->Get("/split/huge")->value_or("").size(), 390u * 1024);
  EXPECT_EQ(*repository->Get("/split/more/t0"), std::nullopt);
}

TEST_F(RepositoryBatchFaultsTest, AThousandKeysTakeOneTransactionPerSixtyFour) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/warm", "up").ok());
  server().ResetRequestCounts();
  ASSERT_EQ(repository->PersistBatch(Entries("/many", 1000)), absl::OkStatus());
  // 64 operations per transaction, one per key: ceil(1000 / 64) = 16 transactions.
  EXPECT_THAT(server().RequestCounts(),
              ElementsAre(std::pair<const std::string, uint64_t>("txn", 16)));
}

TEST_F(RepositoryBatchFaultsTest, AnEmptyBatchSendsNothing) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  server().ResetRequestCounts();
  size_t written = 7;
  ASSERT_EQ(repository->PersistBatch({}, &written), absl::OkStatus());
  EXPECT_EQ(written, 0u);
  EXPECT_TRUE(server().RequestCounts().empty());
}

}  // namespace
}  // namespace registry::testing
