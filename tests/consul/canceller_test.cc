// SPDX-License-Identifier: Apache-2.0
#include "consul/canceller.h"

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace registry::consul {
namespace {

TEST(CancellerTest, CancelRunsRegisteredWakersOnce) {
  Canceller canceller;
  int woken = 0;
  Canceller::Waker waker(&canceller, [&woken] { ++woken; });
  EXPECT_FALSE(waker.cancelled());
  canceller.Cancel();
  canceller.Cancel();
  EXPECT_EQ(woken, 1);
  EXPECT_TRUE(canceller.IsCancelled());
}

TEST(CancellerTest, WakerCreatedAfterCancelReportsCancelledAndNeverRuns) {
  Canceller canceller;
  canceller.Cancel();
  bool woken = false;
  Canceller::Waker waker(&canceller, [&woken] { woken = true; });
  EXPECT_TRUE(waker.cancelled());
  EXPECT_FALSE(woken);
}

TEST(CancellerTest, DestroyedWakerIsNotRun) {
  Canceller canceller;
  bool woken = false;
  {
    Canceller::Waker waker(&canceller, [&woken] { woken = true; });
  }
  canceller.Cancel();
  EXPECT_FALSE(woken);
}

TEST(CancellerTest, AChildIsCancelledWithItsParentAndCarriesItsDeadline) {
  Canceller parent;
  const absl::Time deadline = absl::Now() + absl::Seconds(1);
  Canceller child(&parent, deadline);
  EXPECT_EQ(child.deadline(), deadline);
  EXPECT_EQ(parent.deadline(), absl::InfiniteFuture());
  bool woken = false;
  Canceller::Waker waker(&child, [&woken] { woken = true; });
  parent.Cancel();
  EXPECT_TRUE(child.IsCancelled());
  EXPECT_TRUE(woken);
}

TEST(CancellerTest, AChildOfACancelledParentStartsCancelledAndCancellingItSparesTheParent) {
  Canceller parent;
  {
    Canceller child(&parent, absl::InfiniteFuture());
    child.Cancel();
  }
  EXPECT_FALSE(parent.IsCancelled());
  parent.Cancel();
  Canceller late(&parent, absl::InfiniteFuture());
  EXPECT_TRUE(late.IsCancelled());
}

TEST(CancellerTest, NullCancellerRegistersNothing) {
  Canceller::Waker waker(nullptr, [] {});
  EXPECT_FALSE(waker.cancelled());
}

TEST(CancellerTest, ConcurrentCancelWakesOnlyWakersAliveAtThatMoment) {
  Canceller canceller;
  std::atomic<int> woken{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 200; ++j) {
        Canceller::Waker waker(&canceller, [&woken] { woken.fetch_add(1); });
      }
    });
  }
  canceller.Cancel();
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(canceller.IsCancelled());
  EXPECT_LE(woken.load(), 4);  // at most the wakers alive at the moment of Cancel()
}

}  // namespace
}  // namespace registry::consul
