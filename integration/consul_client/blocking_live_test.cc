// SPDX-License-Identifier: Apache-2.0
// Live blocking queries through registry::consul::Client: wake-ups on writes, millisecond
// waits, cancellation from another thread, and IndexTracker fed by real responses.
#include <string>

#include "devserver/store.h"
#include "gtest/gtest.h"
#include "integration/consul_client/live_fixture.h"
#include "integration/testing/server_test.h"

namespace registry::consul::live {
namespace {

using BlockingLiveTest = LiveClientTest;
// Tests that need the dev server's fault injection, request counts or a second server.
class BlockingLiveFaultsTest : public registry::testing::DevServerOnly<LiveClientTest> {};
using AsyncGet = AsyncCall<absl::StatusOr<KvGetResult>>;

TEST_F(BlockingLiveFaultsTest, BlockedGetReturnsPromptlyWithTheNewValueWhenTheKeyIsWritten) {
  const uint64_t index = Put("watched", "v1");
  ASSERT_GT(index, 0u);
  const uint64_t gets = RequestCount(server(), "kv.get");
  AsyncGet read([this, index](Canceller* canceller) {
    return client().KvGet("watched", {.index = index, .wait = absl::Seconds(30)}, canceller);
  });
  ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));  // the read is at the server

  const absl::Time written = absl::Now();
  ASSERT_OK_AND_ASSIGN(bool put, client().KvPut("watched", "v2"));
  ASSERT_TRUE(put);
  ASSERT_TRUE(read.Done(absl::Seconds(2))) << "still blocked after the write";
  const absl::Duration latency = absl::Now() - written;
  ASSERT_OK_AND_ASSIGN(KvGetResult result, read.Get());
  // A higher index and the new value: it returned because of the write, not before it.
  ASSERT_TRUE(result.entry.has_value());
  EXPECT_EQ(result.entry->value, "v2");
  EXPECT_GT(result.meta.index, index);
  EXPECT_EQ(result.meta.index, result.entry->modify_index);
  EXPECT_LT(latency, absl::Seconds(2));
}

TEST_F(BlockingLiveFaultsTest, BlockedGetOnAnAbsentKeyReturnsWhenTheKeyAppears) {
  ASSERT_GT(Put("elsewhere", "x"), 0u);
  ASSERT_OK_AND_ASSIGN(KvGetResult absent, client().KvGet("later"));
  ASSERT_FALSE(absent.entry.has_value());
  const uint64_t gets = RequestCount(server(), "kv.get");
  AsyncGet read([this, index = absent.meta.index](Canceller* canceller) {
    return client().KvGet("later", {.index = index, .wait = absl::Seconds(30)}, canceller);
  });
  ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));

  ASSERT_OK(client().KvPut("later", "here").status());
  ASSERT_TRUE(read.Done(absl::Seconds(2))) << "still blocked after the key appeared";
  ASSERT_OK_AND_ASSIGN(KvGetResult result, read.Get());
  ASSERT_TRUE(result.entry.has_value());
  EXPECT_EQ(result.entry->value, "here");
  EXPECT_GT(result.meta.index, absent.meta.index);
}

TEST_F(BlockingLiveFaultsTest, BlockedListWakesWhenAKeyUnderThePrefixIsDeleted) {
  ASSERT_GT(Put("dir/a", "1"), 0u);
  ASSERT_GT(Put("dir/b", "2"), 0u);
  ASSERT_OK_AND_ASSIGN(KvListResult before, client().KvList("dir/"));
  ASSERT_EQ(before.entries.size(), 2u);
  const uint64_t gets = RequestCount(server(), "kv.get");
  AsyncCall<absl::StatusOr<KvListResult>> read(
      [this, index = before.meta.index](Canceller* canceller) {
        return client().KvList("dir/", {.index = index, .wait = absl::Seconds(30)}, canceller);
      });
  ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));

  ASSERT_OK(client().KvDelete("dir/a").status());
  ASSERT_TRUE(read.Done(absl::Seconds(2))) << "still blocked after the delete";
  ASSERT_OK_AND_ASSIGN(KvListResult after, read.Get());
  ASSERT_EQ(after.entries.size(), 1u);
  EXPECT_EQ(after.entries[0].key, "dir/b");
  EXPECT_GT(after.meta.index, before.meta.index);
}

TEST_F(BlockingLiveTest, BlockedGetReturnsTheSameIndexAfterTheWaitWhenNothingChanges) {
  const uint64_t index = Put("quiet", "v");
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(KvGetResult result,
                       client().KvGet("quiet", {.index = index, .wait = absl::Milliseconds(200)}));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(200));
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_EQ(result.meta.index, index);
  ASSERT_TRUE(result.entry.has_value());
  EXPECT_EQ(result.entry->value, "v");
}

TEST_F(BlockingLiveTest, WaitHasMillisecondPrecisionRatherThanWholeSeconds) {
  const uint64_t index = Put("quiet", "v");
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(KvGetResult result,
                       client().KvGet("quiet", {.index = index, .wait = absl::Milliseconds(150)}));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(150));
  EXPECT_LT(took, absl::Milliseconds(900)) << "the wait was rounded up to a second";
  EXPECT_EQ(result.meta.index, index);
}

TEST_F(BlockingLiveFaultsTest, CancelFromAnotherThreadAbortsASixtySecondBlockingReadWithinASecond) {
  const uint64_t index = Put("quiet", "v");
  const uint64_t gets = RequestCount(server(), "kv.get");
  AsyncGet read([this, index](Canceller* canceller) {
    return client().KvGet("quiet", {.index = index, .wait = absl::Seconds(60)}, canceller);
  });
  ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));

  const absl::Time cancelled = absl::Now();
  read.canceller().Cancel();
  ASSERT_TRUE(read.Done(absl::Seconds(1))) << "still blocked after Cancel()";
  EXPECT_LT(absl::Now() - cancelled, absl::Seconds(1));
  absl::StatusOr<KvGetResult> result = read.Get();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
}

TEST_F(BlockingLiveFaultsTest, ClientKeepsWorkingAfterABlockingReadWasCancelled) {
  const uint64_t index = Put("quiet", "v");
  const uint64_t gets = RequestCount(server(), "kv.get");
  {
    AsyncGet read([this, index](Canceller* canceller) {
      return client().KvGet("quiet", {.index = index, .wait = absl::Seconds(60)}, canceller);
    });
    ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));
    read.canceller().Cancel();
    ASSERT_TRUE(read.Done(absl::Seconds(1)));
  }
  ASSERT_OK(client().KvPut("quiet", "v2").status());
  EXPECT_EQ(Lookup("quiet")->value, "v2");
}

TEST_F(BlockingLiveFaultsTest, AlreadyCancelledCancellerFailsWithoutSendingARequest) {
  Canceller canceller;
  canceller.Cancel();
  const uint64_t gets = RequestCount(server(), "kv.get");
  absl::StatusOr<KvGetResult> result = client().KvGet("quiet", {}, &canceller);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  EXPECT_EQ(RequestCount(server(), "kv.get"), gets);
}

TEST_F(BlockingLiveFaultsTest, IndexTrackerFedByRealResponsesReportsChangesAndTheIndexReset) {
  IndexTracker tracker;
  ASSERT_GT(Put("tracked", "v1"), 0u);
  ASSERT_GT(Put("tracked/other", "x"), 0u);
  ASSERT_OK_AND_ASSIGN(KvGetResult first, client().KvGet("tracked"));
  EXPECT_EQ(tracker.Observe(first.meta.index), IndexTracker::Change::kChanged);

  ASSERT_GT(Put("tracked", "v2"), 0u);
  ASSERT_OK_AND_ASSIGN(
      KvGetResult changed,
      client().KvGet("tracked", {.index = tracker.next_index(), .wait = absl::Seconds(5)}));
  EXPECT_EQ(tracker.Observe(changed.meta.index), IndexTracker::Change::kChanged);
  ASSERT_OK_AND_ASSIGN(
      KvGetResult same,
      client().KvGet("tracked", {.index = tracker.next_index(), .wait = absl::Milliseconds(50)}));
  EXPECT_EQ(tracker.Observe(same.meta.index), IndexTracker::Change::kUnchanged);
  const uint64_t before_reset = tracker.next_index();
  ASSERT_GT(before_reset, 1u);

  // The reset wakes a read blocked on the old index, with a lower one.
  const uint64_t gets = RequestCount(server(), "kv.get");
  AsyncGet read([this, before_reset](Canceller* canceller) {
    return client().KvGet("tracked", {.index = before_reset, .wait = absl::Seconds(30)}, canceller);
  });
  ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));
  // Counted on arrival, parked a moment later: a reset before it parks is seen only when the
  // wait ends (as with Consul), so the reset waits for the parked query.
  ASSERT_TRUE(registry::testing::Eventually([this] { return server().store().watch_count() > 0; }));
  server().ResetIndex(1);
  ASSERT_TRUE(read.Done(absl::Seconds(2))) << "still blocked after the index reset";
  ASSERT_OK_AND_ASSIGN(KvGetResult reset, read.Get());
  EXPECT_LT(reset.meta.index, before_reset);
  EXPECT_EQ(tracker.Observe(reset.meta.index), IndexTracker::Change::kReset);
  EXPECT_EQ(tracker.next_index(), 0u);
  ASSERT_TRUE(reset.entry.has_value());
  EXPECT_EQ(reset.entry->value, "v2");  // data survives the reset
}

TEST_F(BlockingLiveTest, ConsistentAndStaleReadsAnswerLikeDefaultReads) {
  ASSERT_GT(Put("mode", "v"), 0u);
  ASSERT_OK_AND_ASSIGN(KvGetResult consistent, client().KvGet("mode", {.consistent = true}));
  ASSERT_OK_AND_ASSIGN(KvGetResult stale, client().KvGet("mode", {.stale = true}));
  ASSERT_TRUE(consistent.entry.has_value() && stale.entry.has_value());
  EXPECT_EQ(consistent.entry->value, "v");
  EXPECT_EQ(stale.entry->value, "v");
  absl::StatusOr<KvGetResult> both = client().KvGet("mode", {.consistent = true, .stale = true});
  EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument) << both.status();
}

}  // namespace
}  // namespace registry::consul::live
