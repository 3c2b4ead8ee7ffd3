// SPDX-License-Identifier: Apache-2.0
#include "integration/history/history_recorder.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace registry::history {
namespace {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kUnknown:
      return "unknown";
  }
  return "unknown";
}

nlohmann::json ToJson(absl::string_view process, const HistoryEntry& entry) {
  nlohmann::json line = {{"process", process}, {"op", entry.op}};
  auto set_string = [&line](const char* name, const std::string& text) {
    if (!text.empty()) line[name] = text;
  };
  set_string("key", entry.key);
  if (entry.value.has_value()) line["value"] = *entry.value;
  if (entry.found.has_value()) line["found"] = *entry.found;
  if (entry.created.has_value()) line["created"] = *entry.created;
  set_string("lock", entry.lock);
  set_string("hold", entry.hold);
  if (entry.capacity > 0) line["capacity"] = entry.capacity;
  set_string("watch", entry.watch);
  set_string("event", entry.event);
  line["call"] = entry.call;
  line["return"] = entry.ret;
  line["outcome"] = OutcomeName(entry.outcome);
  set_string("error", entry.error);
  return line;
}

absl::Status ErrnoStatus(int error, absl::string_view what) {
  return absl::ErrnoToStatus(error, what);
}

}  // namespace

bool IsSafeFileName(absl::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

int64_t HostMonotonicNanos() {
  timespec now{};
  // The raw system call, not clock_gettime(3): see the header (libfaketime).
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

Outcome OutcomeOf(const absl::Status& status) {
  if (status.ok()) return Outcome::kOk;
  if (status.code() == absl::StatusCode::kInvalidArgument) return Outcome::kFailed;
  if (absl::StrContains(status.message(), "nothing written")) return Outcome::kFailed;
  return Outcome::kUnknown;
}

HistoryEntry WatchEventEntry(const DataChangedEvent& event, absl::string_view watch) {
  HistoryEntry entry{.op = "watch_event",
                     .key = event.key,
                     .value = event.value.value_or(""),
                     .watch = std::string(watch)};
  switch (event.type) {
    case DataChangedEvent::Type::kAdded:
      entry.event = "ADDED";
      break;
    case DataChangedEvent::Type::kUpdated:
      entry.event = "UPDATED";
      break;
    case DataChangedEvent::Type::kDeleted:
      entry.event = "DELETED";
      break;
  }
  entry.call = entry.ret = HostMonotonicNanos();
  return entry;
}

void SetOutcome(HistoryEntry& entry, const absl::Status& status) {
  entry.outcome = OutcomeOf(status);
  entry.error = status.ok() ? "" : std::string(status.message());
}

absl::StatusOr<std::unique_ptr<HistoryRecorder>> HistoryRecorder::Open(absl::string_view dir,
                                                                       absl::string_view process) {
  if (!IsSafeFileName(process)) {
    return absl::InvalidArgumentError(
        absl::StrCat("history process name '", process,
                     "': only letters, digits, '.', '_' and '-' (it names the file)"));
  }
  std::string path = absl::StrCat(dir, "/", process, ".jsonl");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("opening history file ", path));
  return std::unique_ptr<HistoryRecorder>(
      new HistoryRecorder(std::string(process), std::move(path), fd));
}

HistoryRecorder::HistoryRecorder(std::string process, std::string path, int fd)
    : process_(std::move(process)), path_(std::move(path)), fd_(fd) {}

HistoryRecorder::~HistoryRecorder() { ::close(fd_); }

absl::Status HistoryRecorder::Record(const HistoryEntry& entry) {
  std::string line;
  try {
    // Strict UTF-8: replacing bytes would record a value nobody wrote.
    line = ToJson(process_, entry).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("history entry '", entry.op, "' of key '", entry.key, "': ", e.what()));
  }
  line.push_back('\n');
  absl::MutexLock lock(&mu_);
  // One write(2) per line: a kill cannot leave half a line. A short write to a regular file
  // (disk full) is finished by the loop or reported.
  absl::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoStatus(errno, absl::StrCat("writing history file ", path_));
    rest.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string HistoryRecorder::NewHoldId() {
  absl::MutexLock lock(&mu_);
  return absl::StrCat(process_, ".", ::getpid(), ".", ++next_hold_);
}

}  // namespace registry::history
