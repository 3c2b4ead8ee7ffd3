// SPDX-License-Identifier: Apache-2.0
// tools/ctl_lock.cc
//
// `registryctl lock NAME [--fair|--read|--write] [--timeout-ms N] -- CMD ARGS...`: runs CMD while
// holding lock NAME (with --fair, the fair lock NAME; with --read or --write, that side of the
// read/write lock NAME). `registryctl semaphore NAME --limit N [--timeout-ms N] -- CMD ARGS...`
// does the same holding a permit of the semaphore NAME: the plugin hands every one out as a
// PluginLock, so one code path serves them all, and "the lock" below reads "the permit".
//
//  1. Acquire on the main thread, which is also the one that unlocks (locks are held per
//     thread): one attempt, then, if it did not get the lock, "waiting for the lock" on
//     stderr and a wait (until the --timeout-ms deadline, which covers both). A SIGINT/SIGTERM
//     while waiting closes the repository from a helper thread; that makes the waiting call
//     return at once, and registryctl exits 128+signal without running CMD. A wait that times
//     out exits 1.
//  2. Run CMD (posix_spawnp, so PATH is searched) in its own process group, with default
//     SIGINT/SIGTERM dispositions and no blocked signals. The main thread then waits in poll()
//     on three descriptors: a pidfd of CMD (it exited), the signal pipe (SIGINT/SIGTERM are
//     forwarded to CMD's group) and an eventfd written by the lock's lost listener (the group
//     gets SIGTERM, then SIGKILL kLostGrace later if CMD is still running).
//  3. After CMD exits, a loss the lock reports only now still counts (CMD may have run without
//     the lock); the group is then killed so no straggler keeps writing. Unlock, and exit with
//     kExitLockLost, or CMD's status.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tools/ctl_commands.h"
#include "tools/descriptors.h"
#include "tools/print_line.h"

extern char** environ;

namespace registry::tools {
namespace {

// How long CMD may take to exit after SIGTERM once the lock is lost.
constexpr absl::Duration kLostGrace = absl::Seconds(5);
// Poll interval for CMD's exit when the kernel has no pidfd_open (before Linux 5.3).
constexpr absl::Duration kExitPollWithoutPidfd = absl::Milliseconds(20);

// An eventfd: written from any thread (even a plugin thread), polled by the main thread.
class EventFd {
 public:
  EventFd() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~EventFd() {
    if (fd_ >= 0) close(fd_);
  }
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void Notify() const {
    const uint64_t one = 1;
    (void)!write(fd_, &one, sizeof(one));  // a full counter is still readable: nothing lost
  }
  void Drain() const {
    uint64_t count = 0;
    (void)!read(fd_, &count, sizeof(count));
  }

 private:
  const int fd_;
};

int PollTimeoutMs(absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return -1;
  if (timeout <= absl::ZeroDuration()) return 0;
  // Round up so a sub-millisecond remainder still waits instead of spinning.
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(timeout) + 1, 60'000));
}

// While the lock is being acquired: waits on its own thread for SIGINT/SIGTERM or Stop(); on a
// signal it closes the repository, so that the waiting lock call returns at once.
class AcquireInterrupter {
 public:
  // Closes `repository` on SIGINT/SIGTERM, and once `first_attempt_deadline` passes unless
  // FirstAttemptEnded() came first: the one attempt made before the announced wait is bounded
  // only by the request timeout, and --timeout-ms must hold however slowly Consul answers it.
  // (The announced wait is a TryLock with the deadline, which keeps it itself.)
  AcquireInterrupter(SignalPipe* signals, plugin::PluginRepository* repository,
                     absl::Time first_attempt_deadline)
      : first_attempt_deadline_(first_attempt_deadline),
        thread_([this, signals, repository] { Run(signals, repository); }) {}
  ~AcquireInterrupter() { Stop(); }
  AcquireInterrupter(const AcquireInterrupter&) = delete;
  AcquireInterrupter& operator=(const AcquireInterrupter&) = delete;

  // The first attempt returned: the deadline no longer closes anything. False if the deadline
  // had already closed the repository under it.
  bool FirstAttemptEnded() {
    int armed = kArmed;
    return deadline_state_.compare_exchange_strong(armed, kDisarmed) || armed == kDisarmed;
  }

  // Stops and joins the thread; returns the signal that interrupted, if one did.
  std::optional<int> Stop() {
    if (thread_.joinable()) {
      stop_.Notify();
      thread_.join();
    }
    const int signo = signo_.load();
    return signo == 0 ? std::nullopt : std::optional<int>(signo);
  }

 private:
  static constexpr int kArmed = 0, kDisarmed = 1, kCut = 2;

  void Run(SignalPipe* signals, plugin::PluginRepository* repository) {
    struct pollfd fds[2] = {{signals->fd(), POLLIN, 0}, {stop_.fd(), POLLIN, 0}};
    for (;;) {
      const bool armed = deadline_state_.load() == kArmed;
      if (poll(fds, 2, armed ? PollTimeoutMs(first_attempt_deadline_) : -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents != 0) return;
      if (std::optional<int> signo = signals->Take(); signo.has_value()) {
        signo_.store(*signo);
        (void)repository->Close();  // its status is reported by the final Close
        return;
      }
      int still_armed = kArmed;
      if (absl::Now() >= first_attempt_deadline_ &&
          deadline_state_.compare_exchange_strong(still_armed, kCut)) {
        (void)repository->Close();
        return;
      }
    }
  }
  // poll()'s timeout until `deadline`, rounded up so that it never wakes before it; -1: none.
  static int PollTimeoutMs(absl::Time deadline) {
    if (deadline == absl::InfiniteFuture()) return -1;
    const absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
    return static_cast<int>(std::min<int64_t>(
        absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), INT32_MAX));
  }

  const absl::Time first_attempt_deadline_;
  EventFd stop_;
  std::atomic<int> signo_{0};
  std::atomic<int> deadline_state_{kArmed};
  std::thread thread_;  // declared last: starts once the members it uses exist
};

// What `lock` or `semaphore` holds while CMD runs, as its messages name it.
struct Held {
  std::string what;       // "lock NAME", "fair lock NAME", "read lock NAME", "semaphore NAME"
  const char* wait_for;   // "the lock", "a permit"
  const char* hold_noun;  // "the lock", "the permit"
};

// What the lost listener (a plugin thread) tells the main thread.
class LostNotice {
 public:
  void Tell(const absl::Status& reason) {
    {
      absl::MutexLock lock(&mu_);
      if (reason_.empty()) reason_ = reason.ToString();
    }
    event_.Notify();
  }
  std::string reason() {
    absl::MutexLock lock(&mu_);
    return reason_.empty() ? "the lock reports it lost" : reason_;
  }
  const EventFd& event() const { return event_; }

 private:
  absl::Mutex mu_;
  std::string reason_ ABSL_GUARDED_BY(mu_);
  EventFd event_;
};

// Starts `command_line` in a new process group. Returns the pid, or the posix_spawnp error.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& command_line, int* spawn_errno) {
  std::vector<char*> argv;
  for (const std::string& arg : command_line) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  CloseOwnDescriptorsOnExec();
  pid_t pid = -1;
  *spawn_errno = posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (*spawn_errno != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run '", command_line[0], "': ", std::strerror(*spawn_errno)));
  }
  return pid;
}

// The shell's view of a wait status: the exit code, or 128 + the terminating signal.
int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitError;
}

struct ChildOutcome {
  int status = 0;            // waitpid status
  bool lost_during = false;  // the lost listener fired while CMD ran
};

// Waits for `pid` (see step 2 above).
ChildOutcome Supervise(const CommandContext& context, const std::string& what, pid_t pid,
                       LostNotice& lost) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  ChildOutcome outcome;
  absl::Time kill_at = absl::InfiniteFuture();
  for (;;) {
    const pid_t done = waitpid(pid, &outcome.status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      outcome.status = 0;  // ECHILD cannot happen: we spawned it and reap it only here
      break;
    }
    absl::Duration wait = pidfd >= 0 ? absl::InfiniteDuration() : kExitPollWithoutPidfd;
    if (kill_at != absl::InfiniteFuture()) wait = std::min(wait, kill_at - absl::Now());
    struct pollfd fds[3] = {
        {context.signals->fd(), POLLIN, 0}, {lost.event().fd(), POLLIN, 0}, {pidfd, POLLIN, 0}};
    if (poll(fds, pidfd >= 0 ? 3 : 2, PollTimeoutMs(wait)) < 0 && errno != EINTR) {
      absl::SleepFor(kExitPollWithoutPidfd);  // cannot poll: degrade to periodic checks
    }
    if (fds[0].revents != 0) {
      while (std::optional<int> signo = context.signals->Take()) kill(-pid, *signo);
    }
    if (fds[1].revents != 0) {
      lost.event().Drain();
      if (!outcome.lost_during) {
        outcome.lost_during = true;
        std::fprintf(context.err,
                     "registryctl: %s: lost while the command ran (%s); sending SIGTERM\n",
                     what.c_str(), lost.reason().c_str());
        std::fflush(context.err);
        kill(-pid, SIGTERM);
        kill_at = absl::Now() + kLostGrace;
      }
    }
    if (absl::Now() >= kill_at) {
      kill(-pid, SIGKILL);
      kill_at = absl::InfiniteFuture();
    }
  }
  if (pidfd >= 0) close(pidfd);
  return outcome;
}

// Acquires `lock` for CMD: one attempt, then (announced) a wait bounded by --timeout-ms that a
// signal ends. Returns nullopt once the lock is held, else the exit code to return.
std::optional<int> AcquireForCommand(const CommandContext& context, const Held& held,
                                     plugin::PluginLock& lock) {
  const std::string& what = held.what;
  absl::StatusOr<bool> acquired = false;
  std::optional<int> interrupted;
  bool deadline_cut = false;
  {
    const std::optional<absl::Duration>& timeout = context.options.lock_timeout;
    const absl::Time deadline =
        timeout.has_value() ? absl::Now() + *timeout : absl::InfiniteFuture();
    // --timeout-ms 0 is one attempt, bounded by the request timeout: nothing to cut.
    AcquireInterrupter interrupter(
        context.signals, context.repository,
        timeout.has_value() && *timeout > absl::ZeroDuration() ? deadline : absl::InfiniteFuture());
    // One attempt first, so that a wait is announced (and a script can tell it is waiting). A
    // failed attempt (say, a 500 from the server) is not final: the wait retries, and reports
    // what keeps failing.
    acquired = lock.TryLock(absl::ZeroDuration());
    deadline_cut = !interrupter.FirstAttemptEnded();
    if (!deadline_cut && !(acquired.ok() && *acquired) && deadline > absl::Now()) {
      PrintLine(context.err, absl::StrCat("registryctl: ", what, ": waiting for ", held.wait_for));
      if (timeout.has_value()) {
        acquired = lock.TryLock(deadline - absl::Now());
      } else {
        absl::Status status = lock.Lock();
        acquired = status.ok() ? absl::StatusOr<bool>(true) : absl::StatusOr<bool>(status);
      }
    }
    interrupted = interrupter.Stop();
  }
  if (interrupted.has_value()) {
    std::fprintf(context.err, "registryctl: %s: interrupted by signal %d while waiting\n",
                 what.c_str(), *interrupted);
    if (acquired.ok() && *acquired) (void)lock.Unlock();
    return 128 + *interrupted;
  }
  if (deadline_cut) {
    // The repository was closed under the call (its error would only say so). Not acquired in
    // time, as the exit code says; whether Consul is down or only slow, nobody knows yet.
    std::fprintf(context.err,
                 "registryctl: %s: not acquired within %s: Consul had not answered the first "
                 "attempt\n",
                 what.c_str(), absl::FormatDuration(*context.options.lock_timeout).c_str());
    return kExitNegative;
  }
  if (!acquired.ok()) return ReportError(context.err, what, acquired.status());
  if (!*acquired) {
    std::fprintf(context.err, "registryctl: %s: not acquired within %s\n", what.c_str(),
                 absl::FormatDuration(*context.options.lock_timeout).c_str());
    return kExitNegative;
  }
  return std::nullopt;
}

struct CommandRun {
  int rc = kExitOk;        // CMD's exit code (or why it could not start)
  bool lost_hold = false;  // the lock was lost while CMD ran
};

// Runs CMD while `lock` is held, and says how it ended.
CommandRun RunCommandUnderLock(const CommandContext& context, const std::string& what,
                               plugin::PluginLock& lock, LostNotice& lost) {
  CommandRun run;
  int spawn_errno = 0;
  absl::StatusOr<pid_t> pid = Spawn(context.options.command_line, &spawn_errno);
  if (!pid.ok()) {
    ReportError(context.err, what, pid.status());
    run.rc = spawn_errno == ENOENT ? kExitCommandNotFound : kExitCannotExecute;
    return run;
  }
  const ChildOutcome outcome = Supervise(context, what, *pid, lost);
  run.rc = ExitCodeOf(outcome.status);
  absl::StatusOr<bool> lost_now = lock.IsLost();
  run.lost_hold = outcome.lost_during || (lost_now.ok() && *lost_now);
  if (run.lost_hold) kill(-*pid, SIGKILL);  // whatever is left of CMD's group must not go on
  return run;
}

// The PluginRepository getter of a LockKind, and what messages call that lock.
struct LockGetter {
  const char* what;
  absl::StatusOr<std::unique_ptr<plugin::PluginLock>> (plugin::PluginRepository::*get)(
      absl::string_view name);
};
LockGetter GetterOf(LockKind kind) {
  switch (kind) {
    case LockKind::kFair:
      return {"fair lock", &plugin::PluginRepository::GetFairLock};
    case LockKind::kRead:
      return {"read lock", &plugin::PluginRepository::GetReadLock};
    case LockKind::kWrite:
      return {"write lock", &plugin::PluginRepository::GetWriteLock};
    case LockKind::kPlain:
      break;
  }
  return {"lock", &plugin::PluginRepository::GetLock};
}

// Runs CMD while holding `lock` (`held` names it in messages); returns the exit code.
int RunHolding(const CommandContext& context, const std::string& name, const Held& held,
               absl::StatusOr<std::unique_ptr<plugin::PluginLock>> lock) {
  const std::string& what = held.what;
  if (context.options.command_line.empty()) {
    std::fprintf(context.err, "registryctl: %s: missing '-- CMD ARGS...' (see --help)\n",
                 what.c_str());
    return kExitError;
  }
  if (!lock.ok()) return ReportError(context.err, what, lock.status());
  LostNotice lost;
  if (!lost.event().ok()) {
    return ReportError(context.err, what, absl::InternalError("eventfd failed"));
  }
  // Registered before acquiring, so no loss of this hold can be missed.
  absl::StatusOr<int64_t> listener = (*lock)->AddLostListener(
      [&lost](const std::string&, const absl::Status& reason) { lost.Tell(reason); });
  if (!listener.ok()) return ReportError(context.err, what, listener.status());
  if (std::optional<int> rc = AcquireForCommand(context, held, **lock); rc.has_value()) {
    return *rc;
  }

  const CommandRun run = RunCommandUnderLock(context, what, **lock, lost);
  absl::Status unlocked = (*lock)->Unlock();
  (*lock)->RemoveLostListener(*listener);
  if (run.lost_hold) {
    std::fprintf(context.err, "registryctl: %s: %s was lost while the command ran (%s)\n",
                 what.c_str(), held.hold_noun, lost.reason().c_str());
    return kExitLockLost;
  }
  if (!unlocked.ok()) {
    // CMD's status stands: the lock goes with the session, when it is closed or by its TTL.
    std::fprintf(context.err,
                 "registryctl: warning: unlock %s: %s (%s is released when the instance "
                 "session ends)\n",
                 name.c_str(), std::string(unlocked.message()).c_str(), held.hold_noun);
  }
  return run.rc;
}

}  // namespace

int RunLock(const CommandContext& context, const std::vector<std::string>& args) {
  const std::string& name = args[0];
  const LockGetter getter = GetterOf(context.options.lock_kind);
  const Held held{absl::StrCat(getter.what, " ", name), "the lock", "the lock"};
  return RunHolding(context, name, held, (context.repository->*getter.get)(name));
}

int RunSemaphore(const CommandContext& context, const std::vector<std::string>& args) {
  const std::string& name = args[0];
  const Held held{absl::StrCat("semaphore ", name), "a permit", "the permit"};
  return RunHolding(context, name, held,
                    context.repository->GetSemaphore(name, context.options.semaphore_limit));
}

}  // namespace registry::tools
