// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_kv_test.cc
//
// Persistent keys: every plain repository method, namespace isolation and key validation,
// against the in-process dev server.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/repository/repository_fixture.h"

namespace registry::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

using RepositoryKvTest = RepositoryTest;
// Tests that need the dev server's fault injection.
class RepositoryKvFaultsTest : public DevServerOnly<RepositoryTest> {};

TEST_F(RepositoryKvTest, GetOfAnAbsentKeyIsEmptyNotAnError) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  absl::StatusOr<std::optional<std::string>> value = repository->Get("/missing");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, std::nullopt);
}

TEST_F(RepositoryKvTest, PersistedValueIsReadBack) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/metadata/db/tables/t1", "v1").ok());
  EXPECT_THAT(*repository->Get("/metadata/db/tables/t1"), Optional(std::string("v1")));
}

TEST_F(RepositoryKvTest, PersistOverwritesAnExistingValue) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/a", "v1").ok());
  ASSERT_TRUE(repository->Persist("/a", "v2").ok());
  EXPECT_THAT(*repository->Get("/a"), Optional(std::string("v2")));
}

TEST_F(RepositoryKvTest, EmptyAndBinaryValuesRoundTrip) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  const std::string binary("\0\x01\xff value", 9);
  ASSERT_TRUE(repository->Persist("/empty", "").ok());
  ASSERT_TRUE(repository->Persist("/binary", binary).ok());
  EXPECT_THAT(*repository->Get("/empty"), Optional(std::string()));
  EXPECT_THAT(*repository->Get("/binary"), Optional(binary));
}

TEST_F(RepositoryKvTest, KeysAreStoredUnderTheNamespace) {
  std::unique_ptr<ConsulRepository> repository = NewRepository("governance_ds");
  ASSERT_TRUE(repository->Persist("/a/b", "v").ok());
  absl::StatusOr<consul::KvGetRawResult> raw_value = raw().KvGetRaw("governance_ds/a/b");
  ASSERT_TRUE(raw_value.ok()) << raw_value.status();
  EXPECT_THAT(raw_value->value, Optional(std::string("v")));
}

TEST_F(RepositoryKvTest, PersistedKeyIsNotBoundToAnySession) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/a", "v").ok());
  EXPECT_EQ(HolderOf("ns/a"), "");
}

TEST_F(RepositoryKvTest, PlainReadsAndWritesCreateNoSession) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/a/b", "v").ok());
  ASSERT_TRUE(repository->Update("/a/b", "w").ok());
  ASSERT_TRUE(repository->Get("/a/b").ok());
  ASSERT_TRUE(repository->GetChildrenKeys("/a").ok());
  ASSERT_TRUE(repository->Delete("/a").ok());
  EXPECT_THAT(SessionIds(), IsEmpty());
}

TEST_F(RepositoryKvTest, GetChildrenKeysReturnsDirectChildNamesSortedWithoutDuplicates) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  for (const char* key : {"/a/c/d", "/a/b", "/a/c/e", "/a/c", "/a/0", "/ab/x", "/a"}) {
    ASSERT_TRUE(repository->Persist(key, "v").ok()) << key;
  }
  EXPECT_THAT(*repository->GetChildrenKeys("/a"), ElementsAre("0", "b", "c"));
}

TEST_F(RepositoryKvTest, GetChildrenKeysOfALeafOrAbsentKeyIsEmpty) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/a/b", "v").ok());
  EXPECT_THAT(*repository->GetChildrenKeys("/a/b"), IsEmpty());
  EXPECT_THAT(*repository->GetChildrenKeys("/nothing"), IsEmpty());
}

TEST_F(RepositoryKvTest, GetChildrenKeysOfTheRootListsTopLevelNames) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/metadata/db", "v").ok());
  ASSERT_TRUE(repository->Persist("/nodes", "v").ok());
  EXPECT_THAT(*repository->GetChildrenKeys("/"), ElementsAre("metadata", "nodes"));
}

TEST_F(RepositoryKvTest, IsExistedIsTrueOnlyForKeysHoldingAValue) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/a/b", "v").ok());
  EXPECT_TRUE(*repository->IsExisted("/a/b"));
  EXPECT_FALSE(*repository->IsExisted("/a"));
  EXPECT_FALSE(*repository->IsExisted("/a/b/c"));
}

TEST_F(RepositoryKvTest, UpdateOverwritesAnExistingKey) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/a", "v1").ok());
  ASSERT_TRUE(repository->Update("/a", "v2").ok());
  EXPECT_THAT(*repository->Get("/a"), Optional(std::string("v2")));
}

TEST_F(RepositoryKvTest, UpdateOfAnAbsentKeyIsNotFoundAndCreatesNothing) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  absl::Status status = repository->Update("/missing", "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("'/missing'"));
  EXPECT_EQ(*repository->Get("/missing"), std::nullopt);
}

TEST_F(RepositoryKvTest, ConcurrentUpdatesAllSucceedAndOneValueWins) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/counter", "start").ok());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (!repository->Update("/counter", absl::StrCat("v", i)).ok()) ++failures;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_THAT(**repository->Get("/counter"), ::testing::StartsWith("v"));
}

TEST_F(RepositoryKvTest, DeleteRemovesTheKeyAndItsWholeSubtree) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  for (const char* key : {"/a", "/a/b", "/a/b/c", "/a/d"}) {
    ASSERT_TRUE(repository->Persist(key, "v").ok()) << key;
  }
  ASSERT_TRUE(repository->Delete("/a").ok());
  for (const char* key : {"/a", "/a/b", "/a/b/c", "/a/d"}) {
    EXPECT_EQ(*repository->Get(key), std::nullopt) << key;
  }
}

TEST_F(RepositoryKvTest, DeleteLeavesSiblingsSharingANamePrefix) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  for (const char* key : {"/a", "/a/x", "/ab", "/ab/x", "/a-b", "/a.b"}) {
    ASSERT_TRUE(repository->Persist(key, "v").ok()) << key;
  }
  ASSERT_TRUE(repository->Delete("/a").ok());
  for (const char* key : {"/ab", "/ab/x", "/a-b", "/a.b"}) {
    EXPECT_THAT(*repository->Get(key), Optional(std::string("v"))) << key;
  }
}

TEST_F(RepositoryKvTest, DeleteOfAnAbsentKeyIsNotAnError) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  EXPECT_TRUE(repository->Delete("/missing").ok());
}

TEST_F(RepositoryKvTest, DeleteOfTheRootEmptiesOnlyThisNamespace) {
  std::unique_ptr<ConsulRepository> ns = NewRepository("ns");
  std::unique_ptr<ConsulRepository> ns2 = NewRepository("ns2");
  ASSERT_TRUE(ns->Persist("/a", "v").ok());
  ASSERT_TRUE(ns2->Persist("/a", "v").ok());
  ASSERT_TRUE(raw().KvPut("ns", "outside").ok());
  ASSERT_TRUE(ns->Delete("/").ok());
  EXPECT_EQ(*ns->Get("/a"), std::nullopt);
  EXPECT_THAT(*ns2->Get("/a"), Optional(std::string("v")));
  EXPECT_THAT(raw().KvGetRaw("ns")->value, Optional(std::string("outside")));
}

// Each write below is applied by the server, which then closes the connection instead of
// answering. It is not sent again (another instance may have written the key since, and a resend
// would undo that write): its caller is told the outcome is unknown, naming the key, and never a
// conflict.
TEST_F(RepositoryKvFaultsTest, WritesWhoseReplyIsLostAreSentOnceAndAnsweredOutcomeUnknown) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  auto lost_reply = [this](absl::FunctionRef<absl::Status()> write) {
    const uint64_t txns = server().RequestCounts()["txn"];
    server().DropNextReplies(1, "/v1/txn", "PUT");
    const absl::Status status = write();
    EXPECT_EQ(server().RequestCounts()["txn"], txns + 1) << "sent again: " << status;
    return status;
  };
  const absl::Status created = lost_reply([&] { return repository->Persist("/a", "v1"); });
  EXPECT_EQ(created.code(), absl::StatusCode::kUnavailable) << created;
  EXPECT_THAT(created.message(), HasSubstr("'/a'"));
  EXPECT_THAT(created.message(), HasSubstr("outcome unknown"));
  EXPECT_THAT(*repository->Get("/a"), Optional(std::string("v1")));
  EXPECT_EQ(lost_reply([&] { return repository->Persist("/a", "v2"); }).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(lost_reply([&] { return repository->Update("/a", "v3"); }).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_THAT(*repository->Get("/a"), Optional(std::string("v3")));
  EXPECT_EQ(lost_reply([&] { return repository->Delete("/a"); }).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(*repository->Get("/a"), std::nullopt);
  EXPECT_EQ(lost_reply([&] { return repository->Update("/a", "v4"); }).code(),
            absl::StatusCode::kUnavailable)
      << "the update's check finds the key absent, but its answer is lost";
}

// A persist of an ephemeral key is a set, then a release of the session's hold (a conditional
// write). A lost reply of the release is resent once a fresh read shows the key untouched.
TEST_F(RepositoryKvFaultsTest, ALostReleaseIsResentOnlyWhenAReadShowsItDidNotLand) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/held", "e").ok());
  server().DropNextConnections(0);
  server().SetLatency(absl::ZeroDuration());
  server().DropNextReplies(1, "/v1/kv/", "PUT");  // the release is applied, its reply lost
  const absl::Status persisted = repository->Persist("/held", "p");
  EXPECT_EQ(persisted.code(), absl::StatusCode::kUnavailable)
      << "the release landed: the fresh read shows it changed, so it is not sent again";
  EXPECT_EQ(HolderOf("ns/held"), "");
  EXPECT_THAT(*repository->Get("/held"), Optional(std::string("p")));
}

// Values too large for a transaction body (over about 380 KiB) take a read and a conditional
// write; up to Consul's 512 KiB they are written as any other.
TEST_F(RepositoryKvTest, ValuesUpToTheLimitArePersistedUpdatedAndUnboundToo) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  const std::string big(512 * 1024, 'b');
  const std::string bigger(512 * 1024, 'c');
  ASSERT_EQ(repository->Persist("/big", big), absl::OkStatus());
  EXPECT_THAT(*repository->Get("/big"), Optional(big));
  ASSERT_EQ(repository->Update("/big", bigger), absl::OkStatus());
  EXPECT_THAT(*repository->Get("/big"), Optional(bigger));
  EXPECT_EQ(repository->Update("/absent", big).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(repository->PersistEphemeral("/held", "e").ok());
  ASSERT_EQ(repository->Persist("/held", big), absl::OkStatus());
  EXPECT_EQ(HolderOf("ns/held"), "");
  EXPECT_THAT(*repository->Get("/held"), Optional(big));
}

TEST_F(RepositoryKvTest, PersistingTheCurrentValueAgainLeavesTheKeyUntouched) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/same", "v").ok());
  absl::StatusOr<consul::KvGetResult> before = raw().KvGet("ns/same");
  ASSERT_TRUE(before.ok() && before->entry.has_value()) << before.status();
  ASSERT_TRUE(repository->Persist("/same", "v").ok());
  ASSERT_TRUE(repository->PersistBatch({{"/same", "v"}}).ok());
  absl::StatusOr<consul::KvGetResult> after = raw().KvGet("ns/same");
  ASSERT_TRUE(after.ok() && after->entry.has_value()) << after.status();
  // No new index: a watcher is not woken and sees no event.
  EXPECT_EQ(after->entry->modify_index, before->entry->modify_index);
  EXPECT_EQ(after->entry->create_index, before->entry->create_index);
}

TEST_F(RepositoryKvFaultsTest, PersistUpdateAndDeleteAreOneRequestEachOnAKeptAliveConnection) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/warm", "up").ok());  // the connection exists from here on
  server().ResetRequestCounts();
  const uint64_t connections = server().accepted_connection_count();
  constexpr int kKeys = 20;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = absl::StrCat("/w/", i);
    ASSERT_TRUE(repository->Persist(key, "v1").ok());
    ASSERT_TRUE(repository->Persist(key, "v2").ok());  // over an existing key
    ASSERT_TRUE(repository->Update(key, "v3").ok());
    ASSERT_TRUE(repository->Delete(key).ok());
  }
  EXPECT_THAT(server().RequestCounts(),
              ElementsAre(std::pair<const std::string, uint64_t>("txn", 4 * kKeys)));
  EXPECT_EQ(server().accepted_connection_count(), connections) << "a write opened a connection";
}

TEST_F(RepositoryKvTest, NamespacesNeverSeeEachOthersKeys) {
  std::unique_ptr<ConsulRepository> ns = NewRepository("ns");
  std::unique_ptr<ConsulRepository> ns2 = NewRepository("ns2");
  ASSERT_TRUE(ns->Persist("/only/in/ns", "v").ok());
  ASSERT_TRUE(ns2->Persist("/only/in/ns2", "v").ok());
  EXPECT_EQ(*ns->Get("/only/in/ns2"), std::nullopt);
  EXPECT_EQ(*ns2->Get("/only/in/ns"), std::nullopt);
  EXPECT_THAT(*ns->GetChildrenKeys("/only/in"), ElementsAre("ns"));
  EXPECT_THAT(*ns2->GetChildrenKeys("/only/in"), ElementsAre("ns2"));
  EXPECT_EQ(ns->Update("/only/in/ns2", "w").code(), absl::StatusCode::kNotFound);
}

TEST_F(RepositoryKvTest, InvalidKeysAreRejectedNamingTheKey) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  for (const char* key : {"", "a", "/a/", "//a", "/a/../b", "/a ", "/"}) {
    absl::Status status = repository->Persist(key, "v");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("'", key, "'")));
  }
  EXPECT_EQ(repository->Get(std::string("/a\nb")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(repository->PersistEphemeral("/a/./b", "v").code(), absl::StatusCode::kInvalidArgument);
}

// Consul's JSON would turn the byte into U+FFFD: a listing or a watch event would carry a key
// that Get cannot find.
TEST_F(RepositoryKvTest, KeysThatAreNotValidUtf8AreRejectedAndNothingIsWritten) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  absl::Status status = repository->Persist("/bytes/t\xE9", "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("not valid UTF-8"));
  EXPECT_THAT(status.message(), HasSubstr("/bytes/t\\xe9"));
  EXPECT_EQ(repository->PersistEphemeral("/bytes/\xFF", "v").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(*repository->GetChildrenKeys("/bytes"), ::testing::IsEmpty());
}

TEST_F(RepositoryKvTest, ManyThreadsUsingEveryMethodAtOnceAllSucceed) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const std::string key = absl::StrCat("/load/t", t, "/k", i % 4);
        const std::string ephemeral = absl::StrCat("/online/t", t);
        const bool ok = repository->Persist(key, "v").ok() && repository->Update(key, "w").ok() &&
                        repository->Get(key).ok() && repository->IsExisted(key).ok() &&
                        repository->GetChildrenKeys("/load").ok() &&
                        repository->PersistEphemeral(ephemeral, absl::StrCat(i)).ok() &&
                        repository->PersistExclusiveEphemeral("/leader", "x").ok() &&
                        (i % 5 != 4 || repository->Delete(key).ok());
        if (!ok) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(repository->GetChildrenKeys("/online")->size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(SessionIds().size(), 1u);
}

}  // namespace
}  // namespace registry::testing
