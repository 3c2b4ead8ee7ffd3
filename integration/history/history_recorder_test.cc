// SPDX-License-Identifier: Apache-2.0
#include "integration/history/history_recorder.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace registry::history {
namespace {

// An entry with the fields every line has (the build refuses partial designated initializers).
HistoryEntry Entry(std::string op, std::string key, std::optional<std::string> value = {}) {
  HistoryEntry entry;
  entry.op = std::move(op);
  entry.key = std::move(key);
  entry.value = std::move(value);
  return entry;
}

class HistoryRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/history-recorder-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<nlohmann::json> ReadLines(const std::string& path) {
    std::ifstream in(path);
    std::vector<nlohmann::json> lines;
    for (std::string line; std::getline(in, line);) {
      lines.push_back(nlohmann::json::parse(line));  // throws, failing the test, on a torn line
    }
    return lines;
  }

  std::string dir_;
};

TEST_F(HistoryRecorderTest, WritesOneJsonObjectPerLineWithTheSetFieldsOnly) {
  auto recorder = HistoryRecorder::Open(dir_, "writer-1");
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  HistoryEntry put = Entry("put", "/k", "v\"1\n");
  put.call = 10;
  put.ret = 20;
  ASSERT_TRUE((*recorder)->Record(put).ok());
  HistoryEntry get = Entry("get", "/k");
  get.found = false;
  get.call = 30;
  get.ret = 40;
  SetOutcome(get, absl::UnavailableError("no server answered"));
  ASSERT_TRUE((*recorder)->Record(get).ok());

  std::vector<nlohmann::json> lines = ReadLines(dir_ + "/writer-1.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], nlohmann::json::parse(R"({"process":"writer-1","op":"put","key":"/k",
      "value":"v\"1\n","call":10,"return":20,"outcome":"ok"})"));
  EXPECT_EQ(lines[1], nlohmann::json::parse(R"({"process":"writer-1","op":"get","key":"/k",
      "found":false,"call":30,"return":40,"outcome":"unknown","error":"no server answered"})"));
}

TEST_F(HistoryRecorderTest, ConcurrentRecordsNeverInterleaveWithinALine) {
  auto recorder = HistoryRecorder::Open(dir_, "p");
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  constexpr int kThreads = 4, kLines = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLines; ++i) {
        // Long values make a torn or interleaved line likely if writes were split.
        HistoryEntry entry =
            Entry("put", absl::StrCat("/t", t), absl::StrCat(std::string(2000, 'x'), i));
        entry.call = HostMonotonicNanos();
        entry.ret = HostMonotonicNanos();
        ASSERT_TRUE((*recorder)->Record(entry).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<nlohmann::json> lines = ReadLines((*recorder)->path());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kLines));
  for (const nlohmann::json& line : lines) {
    EXPECT_LE(line["call"].get<int64_t>(), line["return"].get<int64_t>());
  }
}

TEST_F(HistoryRecorderTest, AKilledProcessLosesNoLineItRecorded) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto recorder = HistoryRecorder::Open(dir_, "killed");
    if (!recorder.ok()) _exit(1);
    for (int i = 0;; ++i) {
      HistoryEntry entry = Entry("put", "/k", absl::StrCat(i));
      if (!(*recorder)->Record(entry).ok()) _exit(1);
      if (i == 99) (void)!write(ready[1], "x", 1);  // 100 lines are recorded
    }
  }
  close(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  // Every line is whole (ReadLines parses each) and in order, and none of the 100 is missing.
  std::vector<nlohmann::json> lines = ReadLines(dir_ + "/killed.jsonl");
  ASSERT_GE(lines.size(), 100u);
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i]["value"], absl::StrCat(i));
}

TEST_F(HistoryRecorderTest, HoldIdsAreUniqueAndNameTheProcess) {
  auto recorder = HistoryRecorder::Open(dir_, "locker");
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert((*recorder)->NewHoldId());
  EXPECT_EQ(ids.size(), 100u);
  EXPECT_EQ(ids.begin()->rfind(absl::StrCat("locker.", getpid(), "."), 0), 0u) << *ids.begin();
}

TEST_F(HistoryRecorderTest, RefusesBadNamesAndValuesThatAreNotUtf8) {
  EXPECT_EQ(HistoryRecorder::Open(dir_, "a/b").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HistoryRecorder::Open(dir_, "..").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(HistoryRecorder::Open(dir_ + "/missing", "p").ok());
  auto recorder = HistoryRecorder::Open(dir_, "p");
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  HistoryEntry entry = Entry("put", "/k", std::string("\xff"));
  EXPECT_EQ((*recorder)->Record(entry).code(), absl::StatusCode::kInvalidArgument);
}

TEST(OutcomeTest, OnlyFailuresThatWroteNothingCountAsFailed) {
  EXPECT_EQ(OutcomeOf(absl::OkStatus()), Outcome::kOk);
  EXPECT_EQ(OutcomeOf(absl::InvalidArgumentError("bad key")), Outcome::kFailed);
  EXPECT_EQ(OutcomeOf(absl::AbortedError("persist '/k' under lock 'a': this instance no longer "
                                         "holds the lock (index is stale); nothing written")),
            Outcome::kFailed);
  EXPECT_EQ(OutcomeOf(absl::AbortedError("...; whether an earlier attempt whose reply was lost "
                                         "was written is unknown")),
            Outcome::kUnknown);
  EXPECT_EQ(OutcomeOf(absl::UnavailableError("no server answered")), Outcome::kUnknown);
  EXPECT_EQ(OutcomeOf(absl::DeadlineExceededError("timed out")), Outcome::kUnknown);
  EXPECT_EQ(OutcomeOf(absl::FailedPreconditionError("repository closed")), Outcome::kUnknown);
}

TEST(HostClockTest, NeverGoesBackwards) {
  int64_t last = HostMonotonicNanos();
  for (int i = 0; i < 1000; ++i) {
    const int64_t now = HostMonotonicNanos();
    ASSERT_GE(now, last);
    last = now;
  }
  EXPECT_GT(last, 0);
}

}  // namespace
}  // namespace registry::history
