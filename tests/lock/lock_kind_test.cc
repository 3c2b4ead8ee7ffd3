// SPDX-License-Identifier: Apache-2.0
// tests/lock/lock_kind_test.cc
//
// The table of lock kinds (lock/lock_kind.h) and the `kind` label of the lock metrics that it
// supplies: operators alert on these label values (docs/operations.md), so they are pinned here.
#include "lock/lock_kind.h"

#include <cstdint>
#include <string>

#include "base/metric_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lock/lock_metrics.h"

namespace registry::lock {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LockKindTest, TheMetricsLabelsAreTheExportedNamesInLockKindOrder) {
  EXPECT_THAT(LockKindLabels(), ElementsAre("mutex", "fair", "semaphore", "read", "write"));
}

TEST(LockKindTest, AKindsSeriesIsTheOneItsLabelNames) {
  metrics::Gauge& fair = SeriesOf(&LockFamilies::lock_waiters, LockKind::kFair);
  const int64_t before = fair.Value();
  fair.Add(1);
  EXPECT_THAT(metrics::MetricsExposition(),
              HasSubstr("registry_consul_lock_waiters{kind=\"fair\"} " +
                        std::to_string(before + 1) + "\n"));
  fair.Add(-1);
}

TEST(LockKindTest, OnlyTheTwoSidesOfAReadWriteLockHaveAnOtherSide) {
  EXPECT_EQ(TraitsOf(LockKind::kRead).other_side, LockKind::kWrite);
  EXPECT_EQ(TraitsOf(LockKind::kWrite).other_side, LockKind::kRead);
  for (LockKind kind : {LockKind::kMutex, LockKind::kFair, LockKind::kSemaphore}) {
    EXPECT_EQ(TraitsOf(kind).other_side, kind) << TraitsOf(kind).getter;
  }
}

}  // namespace
}  // namespace registry::lock
