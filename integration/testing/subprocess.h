// SPDX-License-Identifier: Apache-2.0
// integration/testing/subprocess.h
//
// Child processes for multi-process tests: spawn a binary with its stdout and stderr on pipes,
// read lines with deadlines, signal it, wait for it with a deadline. A Subprocess that is still
// running when destroyed is killed (SIGKILL) and reaped, so a failing test leaves no orphans.
//
// Thread safety: a Subprocess is used by one thread at a time.
#ifndef INTEGRATION_TESTING_SUBPROCESS_H_
#define INTEGRATION_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::integration {

class Subprocess {
 public:
  // Starts argv[0] (a path) with `argv`, and with `env` ("NAME=value" entries) as its whole
  // environment, or this process's when null. Errors: Internal naming the binary.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(
      const std::vector<std::string>& argv, const std::vector<std::string>* env = nullptr);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // Returns the next stdout line (without '\n'), or nullopt at EOF or when `deadline` passes.
  std::optional<std::string> ReadLine(absl::Time deadline);
  // The same for stderr.
  std::optional<std::string> ReadErrLine(absl::Time deadline);

  // Sends `signo`; no effect once the process has been reaped.
  void Signal(int signo);

  // Waits until the process exits or `deadline` passes, draining its output meanwhile. Returns
  // the exit code, 128 + signal for a killed process, or nullopt on timeout.
  std::optional<int> Wait(absl::Time deadline);

  // Everything read so far (including lines returned by ReadLine).
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  Subprocess(pid_t pid, int out_fd, int err_fd);
  // Reads what is available on the open pipes, blocking until `deadline` at most. Returns false
  // if nothing could be read before the deadline and both pipes are not yet at EOF.
  bool Pump(absl::Time deadline);

  pid_t pid_;
  int out_fd_;
  int err_fd_;
  std::optional<int> exit_code_;
  std::string out_;
  std::string err_;
  // Returns the next line of `buffer` after `consumed` (advanced past it), reading `fd` while
  // none is complete; nullopt at EOF or when `deadline` passes.
  std::optional<std::string> NextLine(const std::string& buffer, const int& fd, size_t* consumed,
                                      absl::Time deadline);

  size_t out_consumed_ = 0;  // bytes of out_ already returned by ReadLine
  size_t err_consumed_ = 0;  // bytes of err_ already returned by ReadErrLine
};

struct RunResult {
  int exit_code = -1;  // -1 if it did not finish before the deadline (it was killed)
  std::string out;
  std::string err;
  absl::Duration elapsed;
};

// A directory of this process's own (created on first use under $TMPDIR or /tmp), for files
// handed to child processes: a fixed name in a shared temp dir would be written by every test run
// on the machine at once. Removed with its contents when the process exits normally; set
// REGISTRY_KEEP_TEST_FILES=1 to keep it (its path is then printed on stderr).
const std::string& ProcessTempDir();

// Runs `argv` to completion (at most `timeout`) and returns what it printed; `env` as Start's.
// This process's environment ("NAME=value" entries) without the variables whose names start with
// `dropped_prefix`, plus `added` (name -> value): what a child configured only by `added` sees.
std::vector<std::string> EnvironmentWith(absl::string_view dropped_prefix,
                                         const std::map<std::string, std::string>& added);

RunResult RunProcess(const std::vector<std::string>& argv,
                     absl::Duration timeout = absl::Seconds(20),
                     const std::vector<std::string>* env = nullptr);

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_SUBPROCESS_H_
