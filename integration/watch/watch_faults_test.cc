// SPDX-License-Identifier: Apache-2.0
// No lost final state: after index resets, failing servers, dropped connections and restarts,
// the listener's view converges to the server's. The random runs also record their writes and
// the watcher's events as a history (integration/history) that the history checker judges: every
// event reports a state its key really had, in the order of the writes, and the final view is
// the last write.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/history/history_check.h"
#include "integration/history/history_recorder.h"
#include "integration/watch/watch_fixture.h"
#include "repository/key_space.h"

namespace registry::watch::testing {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using Type = DataChangedEvent::Type;

class WatchFaultsTest : public registry::testing::DevServerOnly<WatchTest> {
 protected:
  void SetUp() override {
    DevServerOnly::SetUp();
    if (IsSkipped()) return;
    // An index reset that happens while no query is parked leaves the next query parked until
    // the wait ends (as with Consul); a short wait bounds how long convergence may take then.
    engine_ = NewEngine(EngineOptions(absl::Seconds(3)));
    ASSERT_NE(engine_, nullptr);
  }
  void TearDown() override {
    if (engine_ != nullptr) engine_->Close();
    EXPECT_THAT(mirror_.violations(), IsEmpty());
    DevServerOnly::TearDown();
  }
  // The listener starts with the existing state (replayed), so its view must always equal the
  // server's once changes stop. With `record`, its events are recorded in a fresh history.
  void WatchA(bool record = false) {
    WatchOptions replay;
    replay.replay_existing = true;
    DataChangedListener listener = mirror_.Listener();
    if (record) {
      absl::StatusOr<std::string> dir = history::FreshHistoryDir(history::CurrentTestHistoryName());
      ASSERT_TRUE(dir.ok()) << dir.status();
      history_dir_ = *dir;
      absl::StatusOr<std::unique_ptr<history::HistoryRecorder>> watcher =
          history::HistoryRecorder::Open(history_dir_, "watcher");
      ASSERT_TRUE(watcher.ok()) << watcher.status();
      watcher_ = *std::move(watcher);
      listener = [this, mirror = std::move(listener)](const DataChangedEvent& event) {
        EXPECT_TRUE(watcher_->Record(history::WatchEventEntry(event, "ns/a")).ok());
        mirror(event);
      };
    }
    absl::StatusOr<WatchId> id = engine_->Watch("ns/a", std::move(listener), replay);
    ASSERT_TRUE(id.ok()) << id.status();
  }
  void ExpectConverged() {
    KeyValues expected = ServerView("ns/a");
    EXPECT_TRUE(mirror_.AwaitView(expected))
        << "listener " << Describe(mirror_.view()) << " vs server " << Describe(expected);
  }

  // Three writers put, delete and delete folders of "ns/a/<0..11>/<0..2>" while faults
  // (failed requests, dropped connections, index resets) hit the server.
  void WriteRandomlyUnderFaultsThenExpectConvergence();

  // One write of the Consul key entry.key through the raw client by the writer whose history
  // `recorder` is, recorded under the key the listener sees ("ns/a/1" is "/a/1"). A recursive
  // delete of K deletes the prefix "K/": Consul deletes by prefix, and "ns/a/1" would take
  // "ns/a/10/..." too, where the history's delete takes K's subtree only.
  void RecordedWrite(history::HistoryRecorder& recorder, history::HistoryEntry entry,
                     const consul::KvDeleteOptions* delete_options);

  std::unique_ptr<WatchEngine> engine_;
  Mirror mirror_;
  std::string history_dir_;                            // WatchA(true)'s history
  std::unique_ptr<history::HistoryRecorder> watcher_;  // the watcher's events in it
};

void WatchFaultsTest::RecordedWrite(history::HistoryRecorder& recorder, history::HistoryEntry entry,
                                    const consul::KvDeleteOptions* delete_options) {
  const bool recursive = delete_options != nullptr && delete_options->recurse;
  absl::StatusOr<bool> written = history::TimeCall(entry, [&] {
    return entry.op == "put"
               ? raw().KvPut(entry.key, *entry.value)
               : raw().KvDelete(recursive ? entry.key + "/" : entry.key, *delete_options);
  });
  history::SetOutcome(entry, written.status());
  entry.key = KeySpace("ns").RepositoryKey(entry.key).value_or(entry.key);
  EXPECT_TRUE(recorder.Record(entry).ok());
}

void WatchFaultsTest::WriteRandomlyUnderFaultsThenExpectConvergence() {
  // Faults are paced by the writers' progress, not by the clock: a client that backs off while a
  // fault lasts would otherwise meet a new fault on every retry and never finish its writes.
  absl::Mutex mu;
  int writes_done = 0;   // guarded by mu
  int writers_left = 3;  // guarded by mu
  std::vector<std::thread> writers;
  std::vector<std::unique_ptr<history::HistoryRecorder>> recorders;
  for (int w = 0; w < 3; ++w) {
    absl::StatusOr<std::unique_ptr<history::HistoryRecorder>> recorder =
        history::HistoryRecorder::Open(history_dir_, absl::StrCat("writer-", w));
    ASSERT_TRUE(recorder.ok()) << recorder.status();
    recorders.push_back(*std::move(recorder));
  }
  for (int w = 0; w < 3; ++w) {
    writers.emplace_back([&, w] {
      absl::BitGen rng;
      const consul::KvDeleteOptions one_key;
      consul::KvDeleteOptions recurse;
      recurse.recurse = true;
      for (int i = 0; i < 150; ++i) {
        const std::string folder = absl::StrCat("ns/a/", absl::Uniform(rng, 0, 12));
        const std::string key = absl::StrCat(folder, "/", absl::Uniform(rng, 0, 3));
        int action = absl::Uniform(rng, 0, 10);
        if (action < 6) {
          RecordedWrite(*recorders[w],
                        {.op = "put", .key = key, .value = absl::StrCat("w", w, "-", i)}, nullptr);
        } else if (action < 9) {
          RecordedWrite(*recorders[w], {.op = "delete", .key = key}, &one_key);
        } else {
          RecordedWrite(*recorders[w], {.op = "delete", .key = folder}, &recurse);
        }
        absl::MutexLock lock(&mu);
        ++writes_done;
      }
      absl::MutexLock lock(&mu);
      --writers_left;
    });
  }
  std::thread faults([&] {
    absl::BitGen rng;
    for (int round = 0;; ++round) {
      switch (round % 4) {
        case 0:
          server().FailNextRequests(absl::Uniform(rng, 1, 6));
          break;
        case 1:
          server().DropAllConnections();
          break;
        case 2:
          server().ResetIndex(absl::Uniform<uint64_t>(rng, 1, 50));
          break;
        case 3:
          server().DropNextConnections(absl::Uniform(rng, 1, 4));
          break;
      }
      absl::MutexLock lock(&mu);
      const int next_fault_at = writes_done + absl::Uniform(rng, 1, 5);
      auto due = [&] { return writers_left == 0 || writes_done >= next_fault_at; };
      mu.Await(absl::Condition(&due));
      if (writers_left == 0) return;
    }
  });
  for (std::thread& writer : writers) writer.join();
  faults.join();
  server().ClearFaults();
  absl::StatusOr<std::unique_ptr<history::HistoryRecorder>> last =
      history::HistoryRecorder::Open(history_dir_, "final-writer");
  ASSERT_TRUE(last.ok()) << last.status();
  RecordedWrite(**last, {.op = "put", .key = "ns/a/final", .value = "done"}, nullptr);
  ExpectConverged();
  if (::testing::Test::HasFailure()) return;
  history::HistoryEntry end{.op = "watch_end", .key = "/a", .watch = "ns/a"};
  end.call = end.ret = history::HostMonotonicNanos();
  ASSERT_TRUE(watcher_->Record(end).ok());
  history::ExpectHistoryChecked(history_dir_);
}

TEST_F(WatchFaultsTest, IndexResetReplaysMissedChangesAsEvents) {
  Put("ns/a/keep", "1");
  Put("ns/a/change", "1");
  Put("ns/a/drop", "1");
  WatchA();
  Put("ns/a/seen", "1");
  ASSERT_TRUE(mirror_.AwaitEventCount(4));
  // The reset must meet a parked query (reads: the starting listing, the query answered by the
  // write, the one parked after it); a reset before it parks is only seen when the wait ends.
  ASSERT_TRUE(Eventually([&] { return server().RequestCounts()["kv.get"] >= 3; }));
  // Every index moves back to 1: a watch trusting indexes would ignore the changes below.
  server().ResetIndex(1);
  Put("ns/a/change", "2");
  Delete("ns/a/drop");
  Put("ns/a/new", "1");
  ExpectConverged();
  std::vector<DataChangedEvent> events = mirror_.events();
  EXPECT_THAT(events, Contains(::testing::Field(&DataChangedEvent::key, "/a/drop")));
  for (size_t i = 3; i < events.size(); ++i) {  // after the replay of the 3 existing keys
    EXPECT_NE(events[i].key, "/a/keep") << "unchanged key reported: " << Describe(events[i]);
  }
}

TEST_F(WatchFaultsTest, BurstOfServerErrorsLosesNoChange) {
  Put("ns/a/x", "1");
  Put("ns/a/y", "1");
  WatchA();
  server().FailNextRequests(8);
  server().DropAllConnections();  // the parked query fails and meets the 500s
  Put("ns/a/x", "2");             // retried by the fixture until the burst is over
  Delete("ns/a/y");
  Put("ns/a/z", "1");
  ExpectConverged();
}

TEST_F(WatchFaultsTest, DroppedConnectionsLoseNoChange) {
  WatchA();
  server().DropNextConnections(3);
  server().DropAllConnections();
  Put("ns/a/x", "1");
  Put("ns/a/y", "1");
  Delete("ns/a/x");
  ExpectConverged();
}

TEST_F(WatchFaultsTest, RestartedEmptyServerIsReportedAsDeletions) {
  Put("ns/a/x", "1");
  Put("ns/a/y", "2");
  WatchA();
  Put("ns/a/z", "3");
  ASSERT_TRUE(mirror_.AwaitView({{"/a/x", "1"}, {"/a/y", "2"}, {"/a/z", "3"}}));
  RestartServer();
  Put("ns/a/y", "fresh");
  ASSERT_TRUE(mirror_.AwaitView({{"/a/y", "fresh"}}));
  std::vector<DataChangedEvent> events = mirror_.events();
  DataChangedEvent deleted_x;
  deleted_x.type = Type::kDeleted;
  deleted_x.key = "/a/x";
  deleted_x.value = "1";
  EXPECT_THAT(events, Contains(deleted_x));
}

TEST_F(WatchFaultsTest, RandomWritesUnderFaultsConvergeToTheServerState) {
  WatchA(/*record=*/true);
  WriteRandomlyUnderFaultsThenExpectConvergence();
}

// The same with a watch that splits (up to 12 folders of 3 keys) and plans again after faults.
TEST_F(WatchFaultsTest, RandomWritesUnderFaultsConvergeToTheServerStateWhenSplit) {
  engine_->Close();
  WatchEngineOptions options = EngineOptions(absl::Seconds(3));
  options.split_threshold = 8;
  options.max_queries_per_watch = 8;
  engine_ = NewEngine(options);
  ASSERT_NE(engine_, nullptr);
  WatchA(/*record=*/true);
  WriteRandomlyUnderFaultsThenExpectConvergence();
}

}  // namespace
}  // namespace registry::watch::testing
