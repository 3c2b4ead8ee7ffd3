// SPDX-License-Identifier: Apache-2.0
// tools/signal_pipe.cc
#include "tools/signal_pipe.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace registry::tools {
namespace {

// The write end the handler uses; -1 when no SignalPipe exists. Lock-free, so async-signal-safe.
std::atomic<int> g_write_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void OnSignal(int signo) {
  const int saved_errno = errno;
  const int fd = g_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signo);
    // A full pipe already holds a pending signal; losing this byte changes nothing.
    (void)!write(fd, &byte, 1);
  }
  errno = saved_errno;
}

absl::Status ErrnoError(const char* what) {
  return absl::InternalError(absl::StrCat("signal pipe: ", what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SignalPipe>> SignalPipe::Install() {
  if (g_write_fd.load() >= 0) return absl::FailedPreconditionError("a SignalPipe already exists");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return ErrnoError("pipe2");
  g_write_fd.store(fds[1]);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = &OnSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int, old_term;
  if (sigaction(SIGINT, &action, &old_int) != 0) {
    absl::Status status = ErrnoError("sigaction(SIGINT)");
    g_write_fd.store(-1);
    close(fds[0]);
    close(fds[1]);
    return status;
  }
  if (sigaction(SIGTERM, &action, &old_term) != 0) {
    absl::Status status = ErrnoError("sigaction(SIGTERM)");
    sigaction(SIGINT, &old_int, nullptr);
    g_write_fd.store(-1);
    close(fds[0]);
    close(fds[1]);
    return status;
  }
  return std::unique_ptr<SignalPipe>(new SignalPipe(fds[0], fds[1], old_int, old_term));
}

SignalPipe::SignalPipe(int read_fd, int write_fd, struct sigaction old_int,
                       struct sigaction old_term)
    : read_fd_(read_fd), write_fd_(write_fd), old_int_(old_int), old_term_(old_term) {}

SignalPipe::~SignalPipe() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  g_write_fd.store(-1);
  close(read_fd_);
  close(write_fd_);
}

int SignalPipe::Wait() {
  for (;;) {
    struct pollfd pfd = {read_fd_, POLLIN, 0};
    const int ready = poll(&pfd, 1, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return SIGTERM;  // poll itself failed: behave as if asked to stop rather than hang
    }
    unsigned char byte = 0;
    const ssize_t n = read(read_fd_, &byte, 1);
    if (n == 1) return byte;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    return SIGTERM;
  }
}

std::optional<int> SignalPipe::Take() {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = read(read_fd_, &byte, 1);
    if (n == 1) return byte;
    if (n < 0 && errno == EINTR) continue;
    return std::nullopt;  // EAGAIN: nothing pending
  }
}

}  // namespace registry::tools
