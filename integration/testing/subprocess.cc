// SPDX-License-Identifier: Apache-2.0
// integration/testing/subprocess.cc
#include "integration/testing/subprocess.h"

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace registry::integration {
namespace {

int PollTimeoutMs(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  // Round up so a sub-millisecond remainder still waits instead of spinning.
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000));
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  std::remove(path);
  return 0;  // keep going: a file that cannot be removed leaves only itself behind
}

// The directory ProcessTempDir() made; removed at exit unless REGISTRY_KEEP_TEST_FILES is set.
const std::string* temp_dir = nullptr;

void RemoveTempDir() {
  const char* keep = std::getenv("REGISTRY_KEEP_TEST_FILES");
  if (keep != nullptr && *keep != '\0') {
    std::fprintf(stderr, "test files kept in %s\n", temp_dir->c_str());
    return;
  }
  nftw(temp_dir->c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(const std::vector<std::string>& argv,
                                                              const std::vector<std::string>* env) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::InternalError("pipe2 failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  if (env != nullptr) {
    for (const std::string& entry : *env) envp.push_back(const_cast<char*>(entry.c_str()));
    envp.push_back(nullptr);
  }
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(),
                             env != nullptr ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return absl::InternalError(absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  return std::unique_ptr<Subprocess>(new Subprocess(pid, out_pipe[0], err_pipe[0]));
}

Subprocess::Subprocess(pid_t pid, int out_fd, int err_fd)
    : pid_(pid), out_fd_(out_fd), err_fd_(err_fd) {}

Subprocess::~Subprocess() {
  if (!exit_code_.has_value()) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

bool Subprocess::Pump(absl::Time deadline) {
  struct pollfd fds[2];
  int count = 0;
  if (out_fd_ >= 0) fds[count++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[count++] = {err_fd_, POLLIN, 0};
  if (count == 0) return true;
  const int ready = poll(fds, count, PollTimeoutMs(deadline));
  if (ready <= 0) return false;
  for (int i = 0; i < count; ++i) {
    if (fds[i].revents == 0) continue;
    char buffer[4096];
    const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
    if (n > 0) {
      (fds[i].fd == out_fd_ ? out_ : err_).append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      int& fd = fds[i].fd == out_fd_ ? out_fd_ : err_fd_;
      close(fd);
      fd = -1;
    }
  }
  return true;
}

std::optional<std::string> Subprocess::NextLine(const std::string& buffer, const int& fd,
                                                size_t* consumed, absl::Time deadline) {
  for (;;) {
    const size_t newline = buffer.find('\n', *consumed);
    if (newline != std::string::npos) {
      std::string line = buffer.substr(*consumed, newline - *consumed);
      *consumed = newline + 1;
      return line;
    }
    if (fd < 0 || absl::Now() >= deadline) return std::nullopt;
    Pump(deadline);
  }
}

std::optional<std::string> Subprocess::ReadLine(absl::Time deadline) {
  return NextLine(out_, out_fd_, &out_consumed_, deadline);
}

std::optional<std::string> Subprocess::ReadErrLine(absl::Time deadline) {
  return NextLine(err_, err_fd_, &err_consumed_, deadline);
}

void Subprocess::Signal(int signo) {
  if (!exit_code_.has_value()) kill(pid_, signo);
}

std::optional<int> Subprocess::Wait(absl::Time deadline) {
  while (!exit_code_.has_value()) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (absl::Now() >= deadline) return std::nullopt;
    // Drain output (the child may block on a full pipe) while waiting; when both pipes are
    // closed there is nothing to poll on, so pause briefly between checks.
    if (out_fd_ < 0 && err_fd_ < 0) {
      absl::SleepFor(std::min(absl::Milliseconds(5), deadline - absl::Now()));
    } else {
      Pump(std::min(deadline, absl::Now() + absl::Milliseconds(50)));
    }
  }
  // Collect whatever is still buffered in the pipes.
  while ((out_fd_ >= 0 || err_fd_ >= 0) && Pump(absl::Now() + absl::Milliseconds(200))) {
  }
  return exit_code_;
}

const std::string& ProcessTempDir() {
  static const std::string* const dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(base != nullptr && *base != '\0' ? base : "/tmp", "/registry-test-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      std::fprintf(stderr, "mkdtemp %s: %s\n", pattern.c_str(), std::strerror(errno));
      std::abort();
    }
    temp_dir = new std::string(pattern);
    std::atexit(RemoveTempDir);
    return temp_dir;
  }();
  return *dir;
}

std::vector<std::string> EnvironmentWith(absl::string_view dropped_prefix,
                                         const std::map<std::string, std::string>& added) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!absl::StartsWith(*entry, dropped_prefix)) entries.emplace_back(*entry);
  }
  for (const auto& [name, value] : added) entries.push_back(absl::StrCat(name, "=", value));
  return entries;
}

RunResult RunProcess(const std::vector<std::string>& argv, absl::Duration timeout,
                     const std::vector<std::string>* env) {
  RunResult result;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(argv, env);
  if (!process.ok()) {
    result.err = std::string(process.status().message());
    return result;
  }
  std::optional<int> code = (*process)->Wait(start + timeout);
  result.exit_code = code.value_or(-1);
  result.elapsed = absl::Now() - start;
  result.out = (*process)->out();
  result.err = (*process)->err();
  return result;
}

}  // namespace registry::integration
