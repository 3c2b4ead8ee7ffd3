// SPDX-License-Identifier: Apache-2.0
// integration/history/history_recorder.h
//
// HistoryRecorder appends the plugin operations of one process to that process's history file,
// one JSON object per line, in the format integration/history/README.md defines; a directory of
// such files is one history, which the checker (integration/history/checker) reads.
//
//   ASSIGN_OR_RETURN(auto recorder, HistoryRecorder::Open(dir, "writer-3"));
//   HistoryEntry entry;
//   entry.op = "put", entry.key = "/k", entry.value = "writer-3.17";  // unique values
//   entry.call = HostMonotonicNanos();
//   absl::Status status = repository.Persist(entry.key, *entry.value);
//   entry.ret = HostMonotonicNanos();
//   SetOutcome(entry, status);
//   RETURN_IF_ERROR(recorder->Record(entry));
//
// Durability: Record() hands each line to the kernel with one write(2) before it returns, so a
// process killed (even by SIGKILL) loses at most the line it was recording; no line is ever
// half written by a kill. Nothing is fsync'd: a crash of the host may lose more.
//
// Thread safety: Record() and NewHoldId() may be called concurrently from any thread.
#ifndef INTEGRATION_HISTORY_HISTORY_RECORDER_H_
#define INTEGRATION_HISTORY_HISTORY_RECORDER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "registry/events.h"

namespace registry::history {

// Nanoseconds on the host's CLOCK_MONOTONIC, read with the raw system call: every process of the
// host reads the same clock, and a client run under libfaketime (whose clock the fault suites
// slow down or speed up) still records host time, because libfaketime replaces the libc call only.
int64_t HostMonotonicNanos();

enum class Outcome {
  kOk,       // the call returned success (or a definite answer such as "not found")
  kFailed,   // the call failed and certainly changed nothing
  kUnknown,  // it may or may not have taken effect (timed out, connection lost, cancelled)
};

// The outcome of a plugin call that returned `status`. Only failures that the plugin's contract
// says wrote nothing count as kFailed: InvalidArgument (checked before anything is sent) and a
// message that says "nothing written" (the lock's refused fenced writes). Everything else is
// kUnknown: repository.h says an Unavailable write's outcome is unknown, and a request cut by a
// deadline or by Close() may have been applied. Calling a definite failure unknown only weakens
// the check; calling a possible success failed would make the checker report a false violation.
Outcome OutcomeOf(const absl::Status& status);

// One line of the history. `op` is one of the operation names of the README; the optional fields
// are written only when set, and each operation says in the README which it needs. Every member
// has a default initializer, so that a designated initializer may leave any out (GCC 12 warns
// otherwise).
struct HistoryEntry {
  std::string op{};
  std::string key{};                   // repository key; a watch's key (prefix) for watch_end
  std::optional<std::string> value{};  // written, read, or the event's value
  std::optional<bool> found{};         // get: the key existed; update: it did (not NotFound)
  std::optional<bool> created{};       // put_if_absent: this call created the key
  std::string lock{};                  // lock_*, fenced_*: the lock's name
  std::string hold{};                  // lock_*, fenced_*: the hold's id (NewHoldId)
  int capacity = 0;                    // lock_acquire: 1 for a mutex, the limit of a semaphore
  std::string watch{};                 // watch_*: the watcher's id, unique in the history
  std::string event{};                 // watch_event: ADDED, UPDATED or DELETED
  int64_t call = 0;                    // HostMonotonicNanos() before the call
  int64_t ret = 0;                     // HostMonotonicNanos() after it returned
  Outcome outcome = Outcome::kOk;
  std::string error{};  // the status message when not kOk
};

// True when `name` is letters, digits, '.', '_' and '-' only, and not "." or "..": a name that
// is safe as one component of a path.
bool IsSafeFileName(absl::string_view name);

// Sets entry.outcome and entry.error from the status of the call the entry records.
void SetOutcome(HistoryEntry& entry, const absl::Status& status);

// The watch_event line of `event` delivered now to the watcher `watch`.
HistoryEntry WatchEventEntry(const DataChangedEvent& event, absl::string_view watch);

// Runs `call`, setting entry.call right before it and entry.ret right after; returns what it
// returned.
template <typename Call>
auto TimeCall(HistoryEntry& entry, Call&& call) {
  entry.call = HostMonotonicNanos();
  auto result = call();
  entry.ret = HostMonotonicNanos();
  return result;
}

class HistoryRecorder {
 public:
  // Opens (creating or appending to) `dir`/`process`.jsonl; `dir` must exist. `process` names
  // the process in every line: letters, digits, '.', '_' and '-' only, as it is a file name.
  // Errors: InvalidArgument for a bad name; the errno's status when the file cannot be opened.
  static absl::StatusOr<std::unique_ptr<HistoryRecorder>> Open(absl::string_view dir,
                                                               absl::string_view process);
  ~HistoryRecorder();
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  // Appends `entry` as one line (see Durability above). Errors: InvalidArgument when a string is
  // not valid UTF-8 (JSON cannot carry it, and a changed value would no longer match its write);
  // the errno's status when the write fails.
  absl::Status Record(const HistoryEntry& entry);

  // A hold id unique in the history, "<process>.<pid>.<n>", even across restarts of a process
  // under the same name: the stand-in for the fencing token, which the plugin checks in Consul
  // but does not expose.
  std::string NewHoldId();

  const std::string& path() const { return path_; }
  const std::string& process() const { return process_; }

 private:
  HistoryRecorder(std::string process, std::string path, int fd);

  const std::string process_;
  const std::string path_;
  const int fd_;  // O_APPEND; closed by the destructor
  absl::Mutex mu_;
  int64_t next_hold_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace registry::history

#endif  // INTEGRATION_HISTORY_HISTORY_RECORDER_H_
