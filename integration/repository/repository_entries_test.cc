// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_entries_test.cc
//
// What a backup reads and a restore tries first: ListEntries (a subtree's keys with exact values,
// Consul's flags and the ephemeral ones marked, one consistent read, lock state left out),
// StoreKeyPrefix (Consul's name of the namespace root) and CheckBatch (PersistBatch's checks,
// nothing written, the index of the first bad entry), on every server kind.
#include <memory>
#include <optional>
#include <string>
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
using ::testing::IsEmpty;

using RepositoryEntriesTest = RepositoryTest;
using Entry = Repository::StoredEntry;

TEST_F(RepositoryEntriesTest, ASubtreeComesWithExactValuesFlagsAndItsEphemeralKeysMarked) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  const std::string binary("\0\xff\xfe{\x80", 5);  // a NUL, bytes that are not UTF-8
  ASSERT_TRUE(repository->Persist("/a", "").ok());
  ASSERT_TRUE(repository->Persist("/a/b/c", binary).ok());
  ASSERT_TRUE(repository->PersistEphemeral("/a/live", "instance").ok());
  consul::KvPutOptions flags;
  flags.flags = 18446744073709551615u;
  ASSERT_TRUE(raw().KvPut("ns/a/flagged", "f", flags).ok());
  // Not the subtree's: a sibling sharing the name, another namespace, lock state (a folder key).
  ASSERT_TRUE(repository->Persist("/ab", "sibling").ok());
  ASSERT_TRUE(raw().KvPut("ns2/a/x", "other namespace").ok());
  ASSERT_TRUE(raw().KvPut("ns/a/lock/l/", "").ok());

  absl::StatusOr<std::vector<Entry>> entries = repository->ListEntries("/a");
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_THAT(*entries, ElementsAre(Entry{"/a", "", 0, false}, Entry{"/a/b/c", binary, 0, false},
                                    Entry{"/a/flagged", "f", 18446744073709551615u, false},
                                    Entry{"/a/live", "instance", 0, true}));

  absl::StatusOr<std::vector<Entry>> all = repository->ListEntries("/");
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<std::string> keys;
  for (const Entry& entry : *all) keys.push_back(entry.key);
  EXPECT_THAT(keys, ElementsAre("/a", "/a/b/c", "/a/flagged", "/a/live", "/ab"));
  EXPECT_THAT(*repository->ListEntries("/none"), IsEmpty());
  EXPECT_THAT(*repository->ListEntries("/a/b/c"), ElementsAre(Entry{"/a/b/c", binary, 0, false}));
}

TEST_F(RepositoryEntriesTest, AnEphemeralKeyMadePersistentIsListedSoAndOneWhoseInstanceWentIsGone) {
  std::unique_ptr<ConsulRepository> instance = NewRepository();
  ASSERT_TRUE(instance->PersistEphemeral("/nodes/i1", "up").ok());
  ASSERT_TRUE(instance->PersistEphemeral("/nodes/i2", "up").ok());
  ASSERT_TRUE(instance->Persist("/nodes/i2", "kept").ok());
  EXPECT_THAT(*instance->ListEntries("/nodes"),
              ElementsAre(Entry{"/nodes/i1", "up", 0, true}, Entry{"/nodes/i2", "kept", 0, false}));
  ASSERT_TRUE(instance->Close().ok());
  EXPECT_THAT(*NewRepository()->ListEntries("/nodes"),
              ElementsAre(Entry{"/nodes/i2", "kept", 0, false}));
}

TEST_F(RepositoryEntriesTest, TheStoreKeyPrefixIsTheNamespaceFolder) {
  EXPECT_EQ(*NewRepository()->StoreKeyPrefix(), "ns/");
  EXPECT_EQ(*NewRepository("deep/er")->StoreKeyPrefix(), "deep/er/");
}

TEST_F(RepositoryEntriesTest, CheckBatchNamesTheFirstEntryPersistBatchWouldRefuseAndWritesNothing) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  std::vector<Repository::KeyValue> entries = {
      {"/ok/1", "a"}, {"/ok/2", std::string(512 * 1024 + 1, 'x')}, {"/bad/../k", "c"}};
  size_t bad = 99;
  absl::Status status = repository->CheckBatch(entries, &bad);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("entry 1"), HasSubstr("/ok/2"), HasSubstr("524289 bytes")));
  EXPECT_EQ(bad, 1u);
  entries[1].second = "b";
  status = repository->CheckBatch(entries, &bad);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("entry 2"), HasSubstr("/bad/../k")));
  EXPECT_EQ(bad, 2u);
  // PersistBatch refuses the same entry.
  EXPECT_EQ(repository->PersistBatch(entries).code(), absl::StatusCode::kInvalidArgument);
  entries.pop_back();
  EXPECT_TRUE(repository->CheckBatch(entries, &bad).ok());
  EXPECT_EQ(bad, 2u);
  EXPECT_THAT(*repository->ListEntries("/"), IsEmpty()) << "checks write nothing";
}

TEST_F(RepositoryEntriesTest, AfterCloseEveryCallIsAFailedPrecondition) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Close().ok());
  EXPECT_EQ(repository->ListEntries("/").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->CheckBatch({{"/k", "v"}}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->ListEntries("bad").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace registry::testing
