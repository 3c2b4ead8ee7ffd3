// SPDX-License-Identifier: Apache-2.0
// tools/signal_pipe.h
//
// SignalPipe turns SIGINT and SIGTERM into a readable pipe (the self-pipe trick): the handler
// only write()s the signal number, and the program waits for it with poll() on its own thread,
// so no real work ever runs inside a signal handler. While a SignalPipe exists, SIGINT and SIGTERM
// no longer terminate the process; its destructor restores the previous dispositions.
//
// Thread safety: at most one SignalPipe may exist at a time; Wait() and Received() may be
// called from any thread.
#ifndef REGISTRY_TOOLS_SIGNAL_PIPE_H_
#define REGISTRY_TOOLS_SIGNAL_PIPE_H_

#include <signal.h>

#include <memory>
#include <optional>

#include "absl/status/statusor.h"

namespace registry::tools {

class SignalPipe {
 public:
  // Installs the handlers. Errors: Internal if the pipe or a handler cannot be set up, or
  // FailedPrecondition if another SignalPipe exists.
  static absl::StatusOr<std::unique_ptr<SignalPipe>> Install();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Blocks until SIGINT or SIGTERM arrives (or has arrived since Install) and returns its number.
  int Wait();

  // Returns a pending signal's number without blocking, or nullopt when none is pending.
  std::optional<int> Take();

  // A descriptor that polls readable (POLLIN) while a signal is pending, for callers that wait
  // for signals and other events together; Wait() or Take() consumes the signal.
  int fd() const { return read_fd_; }

 private:
  SignalPipe(int read_fd, int write_fd, struct sigaction old_int, struct sigaction old_term);

  const int read_fd_;
  const int write_fd_;
  const struct sigaction old_int_;
  const struct sigaction old_term_;
};

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_SIGNAL_PIPE_H_
