// SPDX-License-Identifier: Apache-2.0
// tests/base/listener_registry_test.cc
#include "base/listener_registry.h"

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry {
namespace {

using ::testing::ElementsAre;

TEST(ListenerRegistryTest, NotifiesEveryListenerInTheOrderTheyWereAdded) {
  ListenerRegistry<int> listeners("test listener");
  std::vector<std::string> calls;
  listeners.Add([&](int value) { calls.push_back("a" + std::to_string(value)); });
  listeners.Add([&](int value) { calls.push_back("b" + std::to_string(value)); });
  listeners.Notify(1);
  listeners.Notify(2);
  EXPECT_THAT(calls, ElementsAre("a1", "b1", "a2", "b2"));
}

TEST(ListenerRegistryTest, ARemovedListenerIsNotCalledAgain) {
  ListenerRegistry<int> listeners("test listener");
  std::vector<int> calls;
  const int id = listeners.Add([&](int value) { calls.push_back(value); });
  listeners.Notify(1);
  listeners.Remove(id);
  listeners.Notify(2);
  EXPECT_THAT(calls, ElementsAre(1));
  EXPECT_TRUE(listeners.empty());
}

TEST(ListenerRegistryTest, AnExceptionIsContainedAndTheOtherListenersAreStillCalled) {
  ListenerRegistry<const std::string&> listeners("test listener");
  std::vector<std::string> calls;
  listeners.Add([](const std::string&) { throw std::runtime_error("standard"); });
  listeners.Add([](const std::string&) { throw 42; });
  listeners.Add([&](const std::string& value) { calls.push_back(value); });
  EXPECT_NO_THROW(listeners.Notify("x"));
  EXPECT_THAT(calls, ElementsAre("x"));
}

TEST(ListenerRegistryTest, AListenerMayRemoveItselfAndAnotherFromInsideItsCall) {
  ListenerRegistry<int> listeners("test listener");
  std::vector<std::string> calls;
  int self = 0;
  int next = 0;
  self = listeners.Add([&](int) {
    calls.push_back("self");
    listeners.Remove(self);  // returns at once: waiting for itself would deadlock
    listeners.Remove(next);
  });
  next = listeners.Add([&](int) { calls.push_back("next"); });
  listeners.Notify(1);
  listeners.Notify(2);
  EXPECT_THAT(calls, ElementsAre("self"));
}

TEST(ListenerRegistryTest, RemoveFromAnotherThreadWaitsForTheRunningCall) {
  ListenerRegistry<int> listeners("test listener");
  absl::Notification entered;
  absl::Notification release;
  const int id = listeners.Add([&](int) {
    entered.Notify();
    release.WaitForNotification();
  });
  std::thread notifier([&] { listeners.Notify(1); });
  entered.WaitForNotification();
  absl::Notification removed;
  std::thread remover([&] {
    listeners.Remove(id);
    removed.Notify();
  });
  // The listener cannot end before `release`, so a Remove that returns now did not wait.
  EXPECT_FALSE(removed.WaitForNotificationWithTimeout(absl::Milliseconds(100)));
  release.Notify();
  removed.WaitForNotification();
  remover.join();
  notifier.join();
}

TEST(ListenerRegistryTest, AnEmptyListenerIsKeptButNeverCalled) {
  ListenerRegistry<int> listeners("test listener");
  const int id = listeners.Add(nullptr);
  EXPECT_NE(id, 0);
  EXPECT_NO_THROW(listeners.Notify(1));
  EXPECT_FALSE(listeners.empty());
}

TEST(CallContainingExceptionsTest, DescribesOnlyWhenSomethingWasThrown) {
  int described = 0;
  auto describe = [&] {
    ++described;
    return std::string("call");
  };
  CallContainingExceptions([] {}, describe);
  EXPECT_EQ(described, 0);
  CallContainingExceptions([] { throw std::runtime_error("x"); }, describe);
  EXPECT_EQ(described, 1);
}

}  // namespace
}  // namespace registry
