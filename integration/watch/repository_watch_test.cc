// SPDX-License-Identifier: Apache-2.0
// Repository::Watch / RemoveWatch / RemoveDataListener of the Consul repository, against the dev
// server.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/watch/watch_fixture.h"
#include "registry/repository.h"
#include "repository/instance_session.h"

namespace registry::watch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Type = DataChangedEvent::Type;

class RepositoryWatchTest : public WatchTest {
 protected:
  std::unique_ptr<ConsulRepository> NewRepository(const std::string& name = "ns") {
    ConsulRepositoryOptions options;
    options.client = ClientOptionsForCodeUnderTest();
    options.namespace_name = name;
    options.session_ttl = absl::Seconds(1);
    options.session_lock_delay = absl::Milliseconds(500);
    options.lock_retry = absl::Milliseconds(50);
    options.block_query_wait = absl::Seconds(30);
    absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
    EXPECT_TRUE(repository.ok()) << repository.status();
    return repository.ok() ? *std::move(repository) : nullptr;
  }
};

TEST_F(RepositoryWatchTest, EventsCarryRepositoryKeysOfTheWatchedSubtreeOnly) {
  Mirror mirror;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Watch("/a", mirror.Listener()).ok());
  ASSERT_TRUE(repository->Persist("/ab", "sibling").ok());
  // Each change is awaited before the next: rapid changes to one key may be coalesced.
  ASSERT_TRUE(repository->Persist("/a/b/c", "1").ok());
  ASSERT_TRUE(mirror.AwaitEventCount(1));
  ASSERT_TRUE(repository->Update("/a/b/c", "2").ok());
  ASSERT_TRUE(mirror.AwaitEventCount(2));
  ASSERT_TRUE(repository->Delete("/a").ok());
  ASSERT_TRUE(mirror.AwaitEventCount(3));
  EXPECT_THAT(mirror.events(),
              ElementsAre(Event(Type::kAdded, "/a/b/c", "1"), Event(Type::kUpdated, "/a/b/c", "2"),
                          Event(Type::kDeleted, "/a/b/c", "2")));
  EXPECT_THAT(mirror.violations(), IsEmpty());
}

TEST_F(RepositoryWatchTest, RootWatchSeesTheWholeNamespaceAndNoOther) {
  Mirror mirror;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> repository = NewRepository("ns");
  std::unique_ptr<ConsulRepository> other = NewRepository("ns2");
  ASSERT_TRUE(repository->Watch("/", mirror.Listener()).ok());
  ASSERT_TRUE(other->Persist("/x", "other namespace").ok());
  ASSERT_TRUE(repository->Persist("/x", "1").ok());
  ASSERT_TRUE(repository->Persist("/y/z", "2").ok());
  EXPECT_TRUE(mirror.AwaitView({{"/x", "1"}, {"/y/z", "2"}}));
  EXPECT_THAT(mirror.violations(), IsEmpty());
}

TEST_F(RepositoryWatchTest, ExpiredInstanceSessionShowsItsEphemeralKeyDeletedThenBack) {
  Mirror mirror;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> owner = NewRepository();
  std::unique_ptr<ConsulRepository> observer = NewRepository();
  ASSERT_TRUE(owner->PersistEphemeral("/online/node-1", "up").ok());
  DataListenerOptions replay;
  replay.replay_existing = true;
  ASSERT_TRUE(observer->Watch("/online", mirror.Listener(), replay).ok());
  ASSERT_TRUE(mirror.AwaitView({{"/online/node-1", "up"}}));
  const std::string session = owner->CurrentSessionId();
  ASSERT_FALSE(session.empty());
  ASSERT_TRUE(ExpireSession(session).ok());
  // The key goes with the session; the owner re-persists it after the lock-delay (500 ms).
  ASSERT_TRUE(mirror.AwaitEventCount(3));
  EXPECT_THAT(mirror.events(), ElementsAre(Event(Type::kAdded, "/online/node-1", "up"),
                                           Event(Type::kDeleted, "/online/node-1", "up"),
                                           Event(Type::kAdded, "/online/node-1", "up")));
}

TEST_F(RepositoryWatchTest, ClosingTheOwnerReportsItsEphemeralKeysDeleted) {
  Mirror mirror;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> owner = NewRepository();
  std::unique_ptr<ConsulRepository> observer = NewRepository();
  ASSERT_TRUE(owner->PersistEphemeral("/online/node-1", "up").ok());
  ASSERT_TRUE(observer->Watch("/online", mirror.Listener()).ok());
  ASSERT_TRUE(owner->Close().ok());
  ASSERT_TRUE(mirror.AwaitEventCount(1));
  EXPECT_THAT(mirror.events(), ElementsAre(Event(Type::kDeleted, "/online/node-1", "up")));
}

TEST_F(RepositoryWatchTest, RemoveDataListenerStopsEveryListenerOfThatKeyOnly) {
  std::atomic<int> removed_calls{0};
  std::atomic<bool> removed{false};
  Mirror below;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  auto counting = [&](const DataChangedEvent&) {
    if (removed.load()) ++removed_calls;
  };
  ASSERT_TRUE(repository->Watch("/a", counting).ok());
  ASSERT_TRUE(repository->Watch("/a", counting).ok());
  ASSERT_TRUE(repository->Watch("/a/b", below.Listener()).ok());
  repository->RemoveDataListener("/a");
  removed = true;
  ASSERT_TRUE(repository->Persist("/a/b", "1").ok());
  ASSERT_TRUE(below.AwaitEventCount(1));  // the "/a/b" listener is still registered
  EXPECT_EQ(removed_calls.load(), 0);
}

TEST_F(RepositoryWatchTest, RemoveWatchStopsThatRegistrationOnlyAndForgetsItsKey) {
  std::atomic<int> removed_calls{0};
  std::atomic<bool> removed{false};
  Mirror kept;
  Mirror later;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  absl::StatusOr<Repository::WatchId> first = repository->Watch("/a", [&](const DataChangedEvent&) {
    if (removed.load()) ++removed_calls;
  });
  absl::StatusOr<Repository::WatchId> second = repository->Watch("/a", kept.Listener());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(*first, *second);
  repository->RemoveWatch(*first);
  removed = true;
  repository->RemoveWatch(*first);         // removed already: no-op
  repository->RemoveWatch(*first + 1000);  // unknown: no-op
  ASSERT_TRUE(repository->Persist("/a/x", "1").ok());
  ASSERT_TRUE(kept.AwaitEventCount(1));  // the other registration of "/a" still runs
  EXPECT_EQ(removed_calls.load(), 0);

  // RemoveDataListener("/a") then removes the one left, and a later watch of "/a" is unaffected
  // by the removed ids.
  repository->RemoveDataListener("/a");
  ASSERT_TRUE(repository->Watch("/a", later.Listener()).ok());
  ASSERT_TRUE(repository->Persist("/a/x", "2").ok());
  ASSERT_TRUE(later.AwaitEventCount(1));
  EXPECT_EQ(kept.events().size(), 1u);
}

TEST_F(RepositoryWatchTest, CloseStopsWatchesPromptlyAndLaterWatchesFail) {
  Mirror mirror;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Watch("/a", mirror.Listener()).ok());
  const absl::Time start = absl::Now();
  ASSERT_TRUE(repository->Close().ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  absl::Status late = repository->Watch("/a", mirror.Listener()).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(late)) << late;
}

TEST_F(RepositoryWatchTest, MalformedKeyIsRejectedNamingIt) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  absl::Status status =
      repository->Watch("a/no-leading-slash", [](const DataChangedEvent&) {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("a/no-leading-slash"));
}

TEST_F(RepositoryWatchTest, ListenerMayRemoveItselfFromInsideItsCall) {
  std::atomic<int> calls{0};
  absl::Notification done;
  Mirror other;
  // Declared after what their listeners use: closed and destroyed first.
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository
                  ->Watch("/a",
                          [&](const DataChangedEvent&) {
                            ++calls;
                            repository->RemoveDataListener("/a");
                            done.Notify();
                          })
                  .ok());
  ASSERT_TRUE(repository->Persist("/a/1", "x").ok());
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kPatience));
  ASSERT_TRUE(repository->Watch("/a", other.Listener()).ok());
  ASSERT_TRUE(repository->Persist("/a/2", "y").ok());
  ASSERT_TRUE(other.AwaitEventCount(1));
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace registry::watch::testing
