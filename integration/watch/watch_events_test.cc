// SPDX-License-Identifier: Apache-2.0
// Which events a watch reports, for each kind of change, at the watched key and deep below it.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/watch/watch_fixture.h"

namespace registry::watch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Type = DataChangedEvent::Type;

class WatchEventsTest : public WatchTest {
 protected:
  void SetUp() override {
    WatchTest::SetUp();
    engine_ = NewEngine();
    ASSERT_NE(engine_, nullptr);
  }
  void TearDown() override {
    if (engine_ != nullptr) engine_->Close();
    EXPECT_THAT(mirror_.violations(), IsEmpty());
    WatchTest::TearDown();
  }
  void WatchA(WatchOptions options = {}) {
    absl::StatusOr<WatchId> id = engine_->Watch("ns/a", mirror_.Listener(), options);
    ASSERT_TRUE(id.ok()) << id.status();
  }

  std::unique_ptr<WatchEngine> engine_;
  Mirror mirror_;
};

TEST_F(WatchEventsTest, ReportsAddedUpdatedDeletedAtTheWatchedKey) {
  WatchA();
  Put("ns/a", "1");
  ASSERT_TRUE(mirror_.AwaitEventCount(1));
  Put("ns/a", "2");
  ASSERT_TRUE(mirror_.AwaitEventCount(2));
  Delete("ns/a");
  ASSERT_TRUE(mirror_.AwaitEventCount(3));
  EXPECT_THAT(mirror_.events(),
              ElementsAre(Event(Type::kAdded, "/a", "1"), Event(Type::kUpdated, "/a", "2"),
                          Event(Type::kDeleted, "/a", "2")));
}

TEST_F(WatchEventsTest, ReportsAddedUpdatedDeletedDeepInTheSubtree) {
  WatchA();
  Put("ns/a/b/c/d", "x");
  ASSERT_TRUE(mirror_.AwaitEventCount(1));
  Put("ns/a/b/c/d", "y");
  ASSERT_TRUE(mirror_.AwaitEventCount(2));
  Delete("ns/a/b/c/d");
  ASSERT_TRUE(mirror_.AwaitEventCount(3));
  EXPECT_THAT(mirror_.events(), ElementsAre(Event(Type::kAdded, "/a/b/c/d", "x"),
                                            Event(Type::kUpdated, "/a/b/c/d", "y"),
                                            Event(Type::kDeleted, "/a/b/c/d", "y")));
}

TEST_F(WatchEventsTest, FlagsChangeWithTheSameValueIsAnUpdate) {
  WatchA();
  Put("ns/a/k", "v");
  ASSERT_TRUE(mirror_.AwaitEventCount(1));
  consul::KvPutOptions flags;
  flags.flags = 7;
  ASSERT_TRUE(raw().KvPut("ns/a/k", "v", flags).ok());
  ASSERT_TRUE(mirror_.AwaitEventCount(2));
  std::vector<DataChangedEvent> events = mirror_.events();
  EXPECT_EQ(events[1].type, Type::kUpdated);
  EXPECT_EQ(events[1].flags, 7u);
}

TEST_F(WatchEventsTest, KeysThatOnlyShareThePrefixStringAreIgnored) {
  WatchA();
  Put("ns/ab", "sibling");
  Put("ns/ab/c", "sibling child");
  Put("ns/a/c", "child");  // written last: once it is seen, the siblings were processed too
  ASSERT_TRUE(mirror_.AwaitEventCount(1));
  ASSERT_TRUE(mirror_.AwaitView({{"/a/c", "child"}}));
  EXPECT_THAT(mirror_.events(), ElementsAre(Event(Type::kAdded, "/a/c", "child")));
}

TEST_F(WatchEventsTest, RecursiveDeleteReportsEveryDeletedKey) {
  Put("ns/a", "root");
  Put("ns/a/x", "1");
  Put("ns/a/y/z", "2");
  Put("ns/ab", "outside");
  WatchOptions replay;
  replay.replay_existing = true;
  WatchA(replay);
  Delete("ns/a", /*recurse=*/true);  // also deletes ns/ab, which the watch does not cover
  ASSERT_TRUE(mirror_.AwaitEventCount(6));
  std::vector<DataChangedEvent> events = mirror_.events();
  events.erase(events.begin(), events.begin() + 3);  // the replay
  EXPECT_THAT(events,
              ElementsAre(Event(Type::kDeleted, "/a", "root"), Event(Type::kDeleted, "/a/x", "1"),
                          Event(Type::kDeleted, "/a/y/z", "2")));
}

TEST_F(WatchEventsTest, ExistingKeysAreSilentByDefault) {
  Put("ns/a/old", "1");
  WatchA();
  Put("ns/a/new", "2");
  ASSERT_TRUE(mirror_.AwaitEventCount(1));
  EXPECT_THAT(mirror_.events(), ElementsAre(Event(Type::kAdded, "/a/new", "2")));
}

TEST_F(WatchEventsTest, ReplayReportsExistingKeysAsAddedBeforeLaterChanges) {
  Put("ns/a/old", "1");
  Put("ns/a/older", "0");
  WatchOptions options;
  options.replay_existing = true;
  WatchA(options);
  Put("ns/a/old", "2");
  ASSERT_TRUE(mirror_.AwaitEventCount(3));
  EXPECT_THAT(mirror_.events(),
              ElementsAre(Event(Type::kAdded, "/a/old", "1"), Event(Type::kAdded, "/a/older", "0"),
                          Event(Type::kUpdated, "/a/old", "2")));
}

TEST_F(WatchEventsTest, ChangeRightAfterWatchReturnsIsNeverMissed) {
  WatchA();
  Put("ns/a/first", "1");  // no wait in between: the starting listing is taken by Watch()
  ASSERT_TRUE(mirror_.AwaitView({{"/a/first", "1"}}));
}

TEST_F(WatchEventsTest, SessionExpiryOfAnEphemeralKeyIsReportedAsDeleted) {
  consul::SessionCreateOptions session;
  session.behavior = consul::SessionBehavior::kDelete;
  session.ttl = absl::Seconds(1);
  session.lock_delay = absl::ZeroDuration();
  absl::StatusOr<std::string> id = raw().CreateSession(session);
  ASSERT_TRUE(id.ok()) << id.status();
  consul::KvPutOptions acquire;
  acquire.acquire = *id;
  ASSERT_TRUE(raw().KvPut("ns/a/online", "node-1", acquire).value_or(false));
  WatchOptions replay;
  replay.replay_existing = true;
  WatchA(replay);
  ASSERT_TRUE(ExpireSession(*id).ok());
  ASSERT_TRUE(mirror_.AwaitEventCount(2));
  EXPECT_THAT(mirror_.events(), ElementsAre(Event(Type::kAdded, "/a/online", "node-1"),
                                            Event(Type::kDeleted, "/a/online", "node-1")));
}

TEST_F(WatchEventsTest, WatchOnAPurePrefixCoversEveryKeyBelowIt) {
  absl::StatusOr<WatchId> id = engine_->Watch("ns/", mirror_.Listener());
  ASSERT_TRUE(id.ok()) << id.status();
  Put("ns/x", "1");
  Put("other/y", "2");
  Put("ns/z/w", "3");
  ASSERT_TRUE(mirror_.AwaitView({{"/x", "1"}, {"/z/w", "3"}}));
}

TEST_F(WatchEventsTest, WatchOfAMalformedKeyFailsNamingIt) {
  absl::StatusOr<WatchId> id = engine_->Watch("/ns/bad", mirror_.Listener());
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(id.status())) << id.status();
  EXPECT_THAT(std::string(id.status().message()), ::testing::HasSubstr("/ns/bad"));
  EXPECT_EQ(engine_->watch_count(), 0u);
}

}  // namespace
}  // namespace registry::watch::testing
