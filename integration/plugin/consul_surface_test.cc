// SPDX-License-Identifier: Apache-2.0
// integration/plugin/consul_surface_test.cc
//
// The watch (1.1), lock (1.2), fair lock (1.3), semaphore (1.4) and read/write lock (1.5) entries
// of the real Consul plugin, through the C++ wrapper, against a consul-dev-server process:
// independent removal of watches sharing a key (the adapter multiplexes them over the repository's
// per-key removal), removal from inside a callback, contention between repositories (sessions),
// semaphore limits, readers and writers, and loss on session expiry.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/eventually.h"
#include "integration/testing/server_process_test.h"

namespace registry::integration {
namespace {

using plugin::PluginLock;
using plugin::PluginRepository;
using plugin::PluginWatch;
using ::testing::HasSubstr;

using ::registry::testing::kPatience;

// Values seen by a listener, in order; tests wait for a count with a deadline.
class Values {
 public:
  DataChangedListener Listener() {
    return [this](const DataChangedEvent& event) {
      absl::MutexLock lock(&mu_);
      seen_.push_back(event.value.value_or("<unknown>"));
    };
  }
  std::vector<std::string> WaitFor(size_t count) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return seen_.size() >= count; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kPatience);
    return seen_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> seen_ ABSL_GUARDED_BY(mu_);
};

class ConsulSurfaceTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    ServerProcessTest::SetUp();
    if (HasFatalFailure()) return;
    absl::StatusOr<std::shared_ptr<plugin::PluginLibrary>> library =
        plugin::LoadPluginFile(CONSUL_PLUGIN);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *library;
    namespace_ = absl::StrCat("consul_surface_",
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    repository_ = NewRepository();
    ASSERT_NE(repository_, nullptr);
  }

  std::unique_ptr<PluginRepository> NewRepository() {
    plugin::PropList props = {{"namespace", namespace_},
                              {"server-lists", server_address()},
                              {"timeToLiveSeconds", "1"},
                              {"sessionLockDelayMilliseconds", "0"},
                              {"blockQueryTimeMilliseconds", "2000"}};
    if (!token().empty()) props.emplace_back("token", token());
    absl::StatusOr<std::unique_ptr<PluginRepository>> repository = library_->CreateFromProps(props);
    EXPECT_TRUE(repository.ok()) << repository.status();
    return repository.ok() ? std::move(*repository) : nullptr;
  }

  std::shared_ptr<plugin::PluginLibrary> library_;
  std::string namespace_;
  std::unique_ptr<PluginRepository> repository_;
};

TEST_F(ConsulSurfaceTest, PropsThatParseAreAcceptedByTheRepositoryAndErrorsNameTheProps) {
  // 45 s is within lockRetryMilliseconds' own limit but longer than the default 30 s TTL.
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository =
      library_->CreateFromProps({{"namespace", namespace_},
                                 {"server-lists", server_address()},
                                 {"lockRetryMilliseconds", "45000"}});
  ASSERT_FALSE(repository.ok());
  EXPECT_EQ(repository.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(repository.status().message(),
              ::testing::HasSubstr("lockRetryMilliseconds: 45s must be positive and at most 30s "
                                   "(timeToLiveSeconds)"));
}

TEST_F(ConsulSurfaceTest, WatchesSharingAKeyAreRemovedIndependently) {
  Values first;
  Values second;
  absl::StatusOr<PluginWatch> a = repository_->AddWatch("/k", first.Listener());
  absl::StatusOr<PluginWatch> b = repository_->AddWatch("/k", second.Listener());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(repository_->Persist("/k", "1").ok());
  ASSERT_EQ(first.WaitFor(1).size(), 1u);
  ASSERT_EQ(second.WaitFor(1).size(), 1u);
  a->Remove();
  ASSERT_TRUE(repository_->Persist("/k", "2").ok());
  EXPECT_THAT(second.WaitFor(2), ::testing::ElementsAre("1", "2"));
  // Another watch added and removed meanwhile leaves `b` alone too.
  Values third;
  absl::StatusOr<PluginWatch> c = repository_->AddWatch("/k", third.Listener());
  ASSERT_TRUE(c.ok());
  c->Remove();
  ASSERT_TRUE(repository_->Persist("/k", "3").ok());
  EXPECT_THAT(second.WaitFor(3), ::testing::ElementsAre("1", "2", "3"));
  EXPECT_THAT(first.WaitFor(1), ::testing::ElementsAre("1"));
}

TEST_F(ConsulSurfaceTest, WatchRemovedFromInsideItsCallbackIsNotCalledAgain) {
  absl::Mutex mu;
  int calls = 0;
  PluginWatch self;
  absl::StatusOr<PluginWatch> watch = repository_->AddWatch("/s", [&](const DataChangedEvent&) {
    absl::MutexLock lock(&mu);
    ++calls;
    self.Remove();
  });
  ASSERT_TRUE(watch.ok());
  {
    absl::MutexLock lock(&mu);
    self = std::move(*watch);
  }
  Values sentinel;
  absl::StatusOr<PluginWatch> after = repository_->AddWatch("/s", sentinel.Listener());
  ASSERT_TRUE(after.ok());
  ASSERT_TRUE(repository_->Persist("/s", "1").ok());
  ASSERT_EQ(sentinel.WaitFor(1).size(), 1u);
  ASSERT_TRUE(repository_->Persist("/s", "2").ok());
  ASSERT_EQ(sentinel.WaitFor(2).size(), 2u);
  absl::MutexLock lock(&mu);
  EXPECT_EQ(calls, 1);
}

// The listener's own state (its captures) must stay alive until its call returns: under
// AddressSanitizer a slot freed by the removal is a heap-use-after-free here.
TEST_F(ConsulSurfaceTest, ConnectionListenerRemovedFromInsideItsCallbackFinishesItsCall) {
  absl::Mutex mu;
  int id = -1;
  std::vector<std::string> seen;
  absl::Notification done;
  const std::string tag(64, 'x');  // long enough to live on the heap inside the listener
  id = repository_->AddConnectionListener([&, tag](ConnectionState state) {
    absl::MutexLock lock(&mu);
    repository_->RemoveConnectionListener(id);
    seen.push_back(absl::StrCat(ConnectionStateName(state), ":", tag));
    if (!done.HasBeenNotified()) done.Notify();
  });
  ASSERT_GE(id, 0);
  ASSERT_TRUE(repository_->PersistEphemeral("/online/me", "1").ok());  // creates the session
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kPatience));
  absl::MutexLock lock(&mu);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], absl::StrCat("CONNECTED:", tag));
}

TEST_F(ConsulSurfaceTest, LockHeldThroughOneRepositoryKeepsAnotherWaitingUntilUnlocked) {
  std::unique_ptr<PluginRepository> other = NewRepository();
  ASSERT_NE(other, nullptr);
  absl::StatusOr<std::unique_ptr<PluginLock>> mine = repository_->GetLock("schema/db");
  absl::StatusOr<std::unique_ptr<PluginLock>> theirs = other->GetLock("/schema/db");
  ASSERT_TRUE(mine.ok() && theirs.ok());
  ASSERT_TRUE((*mine)->Lock().ok());
  const absl::Time start = absl::Now();
  EXPECT_EQ((*theirs)->TryLock(absl::Milliseconds(200)).value_or(true), false);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
  ASSERT_TRUE((*mine)->PersistIfHeld("/schema/db/version", "7").ok());
  EXPECT_EQ((*theirs)->PersistIfHeld("/schema/db/version", "8").code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*mine)->Unlock().ok());
  EXPECT_EQ((*theirs)->TryLock(absl::Seconds(5)).value_or(false), true);
  ASSERT_TRUE((*theirs)->Unlock().ok());
  EXPECT_EQ(**other->Get("/schema/db/version"), "7");
}

TEST_F(ConsulSurfaceTest, FairLockThroughTheAbiQueuesApartFromTheMutexAndFencesWrites) {
  std::unique_ptr<PluginRepository> other = NewRepository();
  ASSERT_NE(other, nullptr);
  absl::StatusOr<std::unique_ptr<PluginLock>> mine = repository_->GetFairLock("schema/db");
  absl::StatusOr<std::unique_ptr<PluginLock>> theirs = other->GetFairLock("schema/db");
  absl::StatusOr<std::unique_ptr<PluginLock>> mutex = other->GetLock("schema/db");
  ASSERT_TRUE(mine.ok() && theirs.ok() && mutex.ok());
  ASSERT_TRUE((*mine)->Lock().ok());
  EXPECT_EQ((*theirs)->TryLock(absl::Milliseconds(200)).value_or(true), false);
  EXPECT_EQ((*mutex)->TryLock(absl::ZeroDuration()).value_or(false), true);  // another lock
  ASSERT_TRUE((*mutex)->Unlock().ok());
  ASSERT_TRUE((*mine)->PersistIfHeld("/schema/db/version", "7").ok());
  ASSERT_TRUE((*mine)->Unlock().ok());
  EXPECT_EQ((*theirs)->TryLock(absl::Seconds(5)).value_or(false), true);
  ASSERT_TRUE((*theirs)->PersistIfHeld("/schema/db/version", "8").ok());
  ASSERT_TRUE((*theirs)->Unlock().ok());
  EXPECT_EQ(**repository_->Get("/schema/db/version"), "8");
}

TEST_F(ConsulSurfaceTest, SemaphoreThroughTheAbiLetsLimitHoldersInAtOnceAndNoMore) {
  std::unique_ptr<PluginRepository> second = NewRepository();
  std::unique_ptr<PluginRepository> third = NewRepository();
  ASSERT_TRUE(second != nullptr && third != nullptr);
  absl::StatusOr<std::unique_ptr<PluginLock>> a = repository_->GetSemaphore("pool", 2);
  absl::StatusOr<std::unique_ptr<PluginLock>> b = second->GetSemaphore("pool", 2);
  absl::StatusOr<std::unique_ptr<PluginLock>> c = third->GetSemaphore("pool", 2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ((*a)->TryLock(absl::Seconds(5)).value_or(false), true);
  EXPECT_EQ((*b)->TryLock(absl::Seconds(5)).value_or(false), true);  // both hold a permit
  EXPECT_EQ((*c)->TryLock(absl::Milliseconds(200)).value_or(true), false);
  ASSERT_TRUE((*b)->PersistIfHeld("/pool/by", "second").ok());
  ASSERT_TRUE((*b)->Unlock().ok());
  EXPECT_EQ((*c)->TryLock(absl::Seconds(5)).value_or(false), true);  // b's permit
  ASSERT_TRUE((*c)->Unlock().ok());
  ASSERT_TRUE((*a)->Unlock().ok());
  EXPECT_EQ(**repository_->Get("/pool/by"), "second");
}

TEST_F(ConsulSurfaceTest, SemaphoreLimitsOutOfRangeOrDisagreeingAreErrorsNamingThem) {
  for (int bad : {0, -1, REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX + 1}) {
    absl::StatusOr<std::unique_ptr<PluginLock>> semaphore = repository_->GetSemaphore("pool", bad);
    ASSERT_FALSE(semaphore.ok()) << bad;
    EXPECT_EQ(semaphore.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(semaphore.status().message(), HasSubstr(absl::StrCat("limit ", bad, " ")));
  }
  std::unique_ptr<PluginRepository> other = NewRepository();
  ASSERT_NE(other, nullptr);
  absl::StatusOr<std::unique_ptr<PluginLock>> two = repository_->GetSemaphore("pool", 2);
  absl::StatusOr<std::unique_ptr<PluginLock>> three = other->GetSemaphore("pool", 3);
  ASSERT_TRUE(two.ok() && three.ok());
  ASSERT_TRUE((*two)->Lock().ok());
  absl::StatusOr<bool> refused = (*three)->TryLock(absl::Seconds(5));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              ::testing::AllOf(HasSubstr("limit in Consul is 2"), HasSubstr("asked for 3")));
  ASSERT_TRUE((*two)->Unlock().ok());
}

TEST_F(ConsulSurfaceTest, ReadWriteLockThroughTheAbiLetsReadersInTogetherAndTheWriterAfter) {
  std::unique_ptr<PluginRepository> second = NewRepository();
  std::unique_ptr<PluginRepository> third = NewRepository();
  ASSERT_TRUE(second != nullptr && third != nullptr);
  absl::StatusOr<std::unique_ptr<PluginLock>> a = repository_->GetReadLock("config");
  absl::StatusOr<std::unique_ptr<PluginLock>> b = second->GetReadLock("config");
  absl::StatusOr<std::unique_ptr<PluginLock>> writer = third->GetWriteLock("config");
  absl::StatusOr<std::unique_ptr<PluginLock>> mutex = third->GetLock("config");
  ASSERT_TRUE(a.ok() && b.ok() && writer.ok() && mutex.ok());
  EXPECT_EQ((*a)->TryLock(absl::Seconds(5)).value_or(false), true);
  EXPECT_EQ((*b)->TryLock(absl::Seconds(5)).value_or(false), true);  // both hold the read side
  EXPECT_EQ((*writer)->TryLock(absl::Milliseconds(200)).value_or(true), false);
  EXPECT_EQ((*mutex)->TryLock(absl::ZeroDuration()).value_or(false), true);  // another lock
  ASSERT_TRUE((*mutex)->Unlock().ok());
  ASSERT_TRUE((*b)->PersistIfHeld("/config/read_by", "second").ok());
  ASSERT_TRUE((*b)->Unlock().ok());
  ASSERT_TRUE((*a)->Unlock().ok());
  EXPECT_EQ((*writer)->TryLock(absl::Seconds(5)).value_or(false), true);  // the readers are gone
  ASSERT_TRUE((*writer)->PersistIfHeld("/config/version", "2").ok());
  EXPECT_EQ((*a)->TryLock(absl::Milliseconds(200)).value_or(true), false);  // a writer holds
  ASSERT_TRUE((*writer)->Unlock().ok());
  EXPECT_EQ(**repository_->Get("/config/version"), "2");
  EXPECT_EQ(**repository_->Get("/config/read_by"), "second");
}

TEST_F(ConsulSurfaceTest, ReadWriteLockUpgradeAndASideOtherThanZeroOrOneAreRefusedNamingThem) {
  absl::StatusOr<std::unique_ptr<PluginLock>> read = repository_->GetReadLock("config");
  absl::StatusOr<std::unique_ptr<PluginLock>> write = repository_->GetWriteLock("config");
  ASSERT_TRUE(read.ok() && write.ok());
  ASSERT_TRUE((*read)->Lock().ok());
  absl::StatusOr<bool> upgrade = (*write)->TryLock(absl::Seconds(5));
  ASSERT_FALSE(upgrade.ok());
  EXPECT_EQ(upgrade.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(upgrade.status().message(), HasSubstr("this thread holds the read lock"));
  ASSERT_TRUE((*read)->Unlock().ok());

  // The wrapper asks for 0 or 1 only: a bad side goes through the C table itself.
  const RegistryPluginApi& api = library_->api();
  const std::string address = server_address();
  const char* keys[] = {"namespace", "server-lists", "token"};
  const char* values[] = {namespace_.c_str(), address.c_str(), token().c_str()};
  RegistryRepository* raw = nullptr;
  RegistryError error{};
  ASSERT_EQ(api.create_from_props(keys, values, token().empty() ? 2 : 3, &raw, &error), REGISTRY_OK)
      << (error.message != nullptr ? error.message : "");
  RegistryLock* lock = nullptr;
  EXPECT_EQ(api.get_read_write_lock(raw, "config", 2, &lock, &error), REGISTRY_INVALID_ARGUMENT);
  EXPECT_EQ(lock, nullptr);
  EXPECT_THAT(error.message != nullptr ? error.message : "",
              HasSubstr("write must be 0 (the read side) or 1 (the write side), got 2"));
  api.release_error(&error);
  api.destroy(raw);
}

TEST_F(ConsulSurfaceTest, ExpiredSessionIsReportedToLostListenersAndFencesWrites) {
  absl::StatusOr<std::unique_ptr<PluginLock>> lock = repository_->GetLock("job");
  ASSERT_TRUE(lock.ok());
  absl::Notification told;
  absl::StatusOr<int64_t> id =
      (*lock)->AddLostListener([&](const std::string&, const absl::Status&) { told.Notify(); });
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE((*lock)->Lock().ok());
  absl::StatusOr<std::string> session = KeySession(absl::StrCat(namespace_, "/lock/job/"));
  ASSERT_TRUE(session.ok() && !session->empty()) << session.status();
  ASSERT_TRUE(ExpireSession(*session).ok());
  ASSERT_TRUE(told.WaitForNotificationWithTimeout(kPatience));
  EXPECT_TRUE((*lock)->IsLost().value_or(false));
  absl::Status late = (*lock)->PersistIfHeld("/late", "x");
  EXPECT_FALSE(late.ok());
  EXPECT_THAT(late.message(), HasSubstr("/late"));
  EXPECT_TRUE((*lock)->Unlock().ok());
  EXPECT_FALSE(repository_->Get("/late")->has_value());
}

}  // namespace
}  // namespace registry::integration
