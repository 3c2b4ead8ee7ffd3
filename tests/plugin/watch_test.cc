// SPDX-License-Identifier: Apache-2.0
// tests/plugin/watch_test.cc
//
// Watches across the C ABI (1.1), end to end through a real dlopen of the in-memory test plugin:
// the C callback's events, the C++ wrapper's RAII handles and Repository::Watch, removal (also
// from inside a callback), and several watches on one key.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "integration/testing/eventually.h"
#include "tests/plugin/memory_plugin_test.h"

namespace registry::plugin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Type = DataChangedEvent::Type;

using ::registry::testing::kPatience;

DataChangedEvent Event(Type type, std::string key, std::optional<std::string> value) {
  DataChangedEvent event;
  event.type = type;
  event.key = std::move(key);
  event.value = std::move(value);
  return event;
}

// Collects events from a listener thread; tests wait for a count with a deadline.
class EventLog {
 public:
  DataChangedListener Listener() {
    return [this](const DataChangedEvent& event) {
      absl::MutexLock lock(&mu_);
      events_.push_back(event);
    };
  }
  // Waits until at least `count` events arrived (or kPatience passed); returns them all.
  std::vector<DataChangedEvent> WaitFor(size_t count) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return events_.size() >= count; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kPatience);
    return events_;
  }
  std::vector<DataChangedEvent> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  absl::Mutex mu_;
  std::vector<DataChangedEvent> events_ ABSL_GUARDED_BY(mu_);
};

using PluginWatchTest = MemoryPluginTest;

TEST_F(PluginWatchTest, WatchReportsAddedUpdatedAndDeletedInOrder) {
  EventLog log;
  absl::StatusOr<PluginWatch> watch = repository_->AddWatch("/a", log.Listener());
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(repository_->Persist("/a/b", "1").ok());
  ASSERT_TRUE(repository_->Update("/a/b", "2").ok());
  ASSERT_TRUE(repository_->Delete("/a").ok());
  EXPECT_THAT(log.WaitFor(3),
              ElementsAre(Event(Type::kAdded, "/a/b", "1"), Event(Type::kUpdated, "/a/b", "2"),
                          Event(Type::kDeleted, "/a/b", "2")));
}

TEST_F(PluginWatchTest, WatchCoversTheKeyAndItsSubtreeButNotASiblingSharingThePrefix) {
  EventLog log;
  absl::StatusOr<PluginWatch> watch = repository_->AddWatch("/a", log.Listener());
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(repository_->Persist("/ab", "sibling").ok());
  ASSERT_TRUE(repository_->Persist("/a", "self").ok());
  ASSERT_TRUE(repository_->Persist("/a/x/y", "deep").ok());
  EXPECT_THAT(log.WaitFor(2), ElementsAre(Event(Type::kAdded, "/a", "self"),
                                          Event(Type::kAdded, "/a/x/y", "deep")));
}

TEST_F(PluginWatchTest, ExistingKeysAreSilentUnlessReplayIsAsked) {
  ASSERT_TRUE(repository_->Persist("/r/one", "1").ok());
  EventLog silent;
  EventLog replayed;
  absl::StatusOr<PluginWatch> quiet = repository_->AddWatch("/r", silent.Listener());
  absl::StatusOr<PluginWatch> replay =
      repository_->AddWatch("/r", replayed.Listener(), {.replay_existing = true});
  ASSERT_TRUE(quiet.ok() && replay.ok());
  ASSERT_TRUE(repository_->Persist("/r/two", "2").ok());
  EXPECT_THAT(replayed.WaitFor(2),
              ElementsAre(Event(Type::kAdded, "/r/one", "1"), Event(Type::kAdded, "/r/two", "2")));
  EXPECT_THAT(silent.WaitFor(1), ElementsAre(Event(Type::kAdded, "/r/two", "2")));
}

TEST_F(PluginWatchTest, ValuesCrossByteForByteAndAnUnknownValueIsAbsent) {
  EventLog log;
  absl::StatusOr<PluginWatch> watch = repository_->AddWatch("/", log.Listener());
  ASSERT_TRUE(watch.ok()) << watch.status();
  const std::string binary("\0x\xff", 3);
  ASSERT_TRUE(repository_->Persist("/bin", binary).ok());
  ASSERT_TRUE(repository_->Persist("/v/forgotten", "gone").ok());
  ASSERT_TRUE(repository_->Delete("/v/forgotten").ok());
  EXPECT_THAT(log.WaitFor(3), ElementsAre(Event(Type::kAdded, "/bin", binary),
                                          Event(Type::kAdded, "/v/forgotten", "gone"),
                                          Event(Type::kDeleted, "/v/forgotten", std::nullopt)));
}

TEST_F(PluginWatchTest, RemovedWatchIsNeverCalledWhileAnotherOnTheSameKeyGoesOn) {
  EventLog removed;
  EventLog kept;
  absl::StatusOr<PluginWatch> first = repository_->AddWatch("/k", removed.Listener());
  absl::StatusOr<PluginWatch> second = repository_->AddWatch("/k", kept.Listener());
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(repository_->Persist("/k", "1").ok());
  ASSERT_EQ(removed.WaitFor(1).size(), 1u);
  first->Remove();
  EXPECT_FALSE(first->active());
  ASSERT_TRUE(repository_->Persist("/k", "2").ok());
  // One delivery thread serves both in write order: once `kept` has the second event, `removed`
  // would have had it too.
  EXPECT_THAT(kept.WaitFor(2),
              ElementsAre(Event(Type::kAdded, "/k", "1"), Event(Type::kUpdated, "/k", "2")));
  EXPECT_EQ(removed.events().size(), 1u);
}

TEST_F(PluginWatchTest, WatchAddedAfterTheLastOneOfItsKeyWasRemovedStillWorks) {
  EventLog before;
  absl::StatusOr<PluginWatch> first = repository_->AddWatch("/k", before.Listener());
  ASSERT_TRUE(first.ok());
  first->Remove();  // the key's registrations are released here
  EventLog after;
  absl::StatusOr<PluginWatch> second = repository_->AddWatch("/k", after.Listener());
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(repository_->Persist("/k", "v").ok());
  EXPECT_THAT(after.WaitFor(1), ElementsAre(Event(Type::kAdded, "/k", "v")));
  EXPECT_TRUE(before.events().empty());
}

TEST_F(PluginWatchTest, WatchMayRemoveItselfFromInsideItsCallback) {
  absl::Mutex mu;
  int calls = 0;
  PluginWatch self;
  absl::StatusOr<PluginWatch> watch = repository_->AddWatch("/s", [&](const DataChangedEvent&) {
    absl::MutexLock lock(&mu);
    ++calls;
    self.Remove();  // returns at once; this call finishes, no other follows
  });
  ASSERT_TRUE(watch.ok());
  {
    absl::MutexLock lock(&mu);
    self = std::move(*watch);
  }
  EventLog sentinel;
  absl::StatusOr<PluginWatch> after = repository_->AddWatch("/s", sentinel.Listener());
  ASSERT_TRUE(after.ok());
  ASSERT_TRUE(repository_->Persist("/s", "1").ok());
  ASSERT_TRUE(repository_->Persist("/s", "2").ok());
  ASSERT_EQ(sentinel.WaitFor(2).size(), 2u);
  absl::MutexLock lock(&mu);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(self.active());
}

TEST_F(PluginWatchTest, RepositoryWatchIsRemovedByKeyThroughRemoveDataListener) {
  EventLog on_a;
  EventLog on_a_again;
  EventLog on_b;
  ASSERT_TRUE(repository_->Watch("/a", on_a.Listener()).ok());
  ASSERT_TRUE(repository_->Watch("/a", on_a_again.Listener()).ok());
  ASSERT_TRUE(repository_->Watch("/", on_b.Listener()).ok());
  repository_->RemoveDataListener("/a");
  ASSERT_TRUE(repository_->Persist("/a/x", "1").ok());
  EXPECT_THAT(on_b.WaitFor(1), ElementsAre(Event(Type::kAdded, "/a/x", "1")));
  EXPECT_TRUE(on_a.events().empty());
  EXPECT_TRUE(on_a_again.events().empty());
}

TEST_F(PluginWatchTest, HandleMayOutliveItsRepository) {
  EventLog log;
  absl::StatusOr<PluginWatch> watch = repository_->AddWatch("/k", log.Listener());
  ASSERT_TRUE(watch.ok());
  repository_.reset();  // destroys the repository: no callback after this
  EXPECT_TRUE(watch->active());
  watch->Remove();  // only frees the listener
  EXPECT_FALSE(watch->active());
}

TEST_F(PluginWatchTest, MalformedKeyIsInvalidArgumentNamingIt) {
  absl::StatusOr<PluginWatch> watch = repository_->AddWatch("no-slash", [](const auto&) {});
  ASSERT_FALSE(watch.ok());
  EXPECT_EQ(watch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(watch.status().message(), HasSubstr("'no-slash'"));
}

// ---- The raw C table, as a C host sees it. ----

struct CEvents {
  absl::Mutex mu;
  std::vector<RegistryDataEvent> seen ABSL_GUARDED_BY(mu);  // pointers cleared after the call
  std::vector<std::string> values ABSL_GUARDED_BY(mu);
};

void OnCEvent(const RegistryDataEvent* event, void* user_data) {
  auto* events = static_cast<CEvents*>(user_data);
  absl::MutexLock lock(&events->mu);
  RegistryDataEvent copy = *event;
  events->values.push_back(event->value_known ? std::string(event->value, event->value_len + 1)
                                              : std::string("<unknown>"));
  copy.key = nullptr;
  copy.value = nullptr;
  events->seen.push_back(copy);
}

TEST_F(PluginWatchTest, CCallbackGetsTypedEventsWithNulTerminatedValuesAndTheUserData) {
  const RegistryPluginApi& api = library_->api();
  // A second handle from the same plugin, driven through the table alone.
  RegistryRepository* handle = nullptr;
  RegistryError error{};
  ASSERT_EQ(api.create_from_props(nullptr, nullptr, 0, &handle, &error), REGISTRY_OK);
  CEvents events;
  int64_t id = 0;
  ASSERT_EQ(api.add_data_listener(handle, "/c", 0, &OnCEvent, &events, &id, &error), REGISTRY_OK);
  EXPECT_GT(id, 0);
  ASSERT_EQ(api.persist(handle, "/c/k", "v1", 2, &error), REGISTRY_OK);
  ASSERT_EQ(api.persist(handle, "/c/k", "", 0, &error), REGISTRY_OK);
  ASSERT_EQ(api.delete_key(handle, "/c/k", &error), REGISTRY_OK);
  {
    absl::MutexLock lock(&events.mu);
    auto three = [&events]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(events.mu) { return events.seen.size() >= 3; };
    ASSERT_TRUE(events.mu.AwaitWithTimeout(absl::Condition(&three), kPatience));
    EXPECT_EQ(events.seen[0].type, REGISTRY_DATA_ADDED);
    EXPECT_EQ(events.seen[1].type, REGISTRY_DATA_UPDATED);
    EXPECT_EQ(events.seen[2].type, REGISTRY_DATA_DELETED);
    for (const RegistryDataEvent& e : events.seen) {
      EXPECT_EQ(e.struct_size, sizeof(RegistryDataEvent));
      EXPECT_TRUE(e.value_known);
    }
    EXPECT_EQ(events.seen[1].value_len, 0u);
    EXPECT_EQ(events.values, (std::vector<std::string>{std::string("v1\0", 3), std::string(1, '\0'),
                                                       std::string(1, '\0')}));
  }
  ASSERT_EQ(api.remove_data_listener(handle, id, &error), REGISTRY_OK);
  ASSERT_EQ(api.remove_data_listener(handle, id, &error), REGISTRY_OK) << "unknown id is no error";
  EXPECT_EQ(api.add_data_listener(handle, "/c", 0x80, &OnCEvent, &events, &id, &error),
            REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(error.message, HasSubstr("0x80"));
  api.release_error(&error);
  api.destroy(handle);
}

}  // namespace
}  // namespace registry::plugin
