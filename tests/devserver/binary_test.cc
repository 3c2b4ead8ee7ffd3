// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the consul-dev-server binary: start, listening line, a request, signals,
// exit codes. CONSUL_DEV_SERVER_PATH is set by CMake.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/testing/eventually.h"
#include "tests/devserver/test_http_client.h"

extern char** environ;

namespace registry::devserver {
namespace {

using testing::TestHttpClient;

class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    args.insert(args.begin(), CONSUL_DEV_SERVER_PATH);
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, err[0]);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Child() {
    if (pid_ > 0 && !exit_code_.has_value()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
    if (err_ >= 0) close(err_);
  }

  bool started() const { return pid_ > 0; }
  void Signal(int signal_number) { kill(pid_, signal_number); }

  // Reads stdout up to the first newline, or "" if none arrives within `timeout`.
  std::string ReadStdoutLine(absl::Duration timeout) { return ReadLine(out_, timeout); }
  std::string ReadStderrLine(absl::Duration timeout) { return ReadLine(err_, timeout); }

  // The exit code, or nullopt if the process did not exit normally within `timeout`.
  std::optional<int> WaitExit(absl::Duration timeout) {
    int status = 0;
    if (!registry::testing::Eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
                                       timeout)) {
      return std::nullopt;
    }
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }

 private:
  static std::string ReadLine(int fd, absl::Duration timeout) {
    std::string line;
    const absl::Time deadline = absl::Now() + timeout;
    char c;
    while (line.empty() || line.back() != '\n') {
      const int left = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      pollfd poller{fd, POLLIN, 0};
      if (left <= 0 || poll(&poller, 1, left) <= 0) return "";
      if (read(fd, &c, 1) != 1) return line;
      line += c;
    }
    line.pop_back();
    return line;
  }

  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  std::optional<int> exit_code_;
};

// Returns the port from exactly "consul-dev-server listening on 127.0.0.1:PORT", or 0.
int ListeningPort(const std::string& line) {
  absl::string_view rest = line;
  int port = 0;
  if (!absl::ConsumePrefix(&rest, "consul-dev-server listening on 127.0.0.1:") ||
      !absl::SimpleAtoi(rest, &port) || rest.find_first_not_of("0123456789") != rest.npos) {
    return 0;
  }
  return port;
}

// Starts the server with `args`, which it must refuse: checks that it exits 2 and returns the
// one line it printed on stderr.
std::string RefusedStart(const std::vector<std::string>& args) {
  Child child(args);
  const std::string line = child.ReadStderrLine(absl::Seconds(10));
  EXPECT_EQ(child.WaitExit(absl::Seconds(10)), 2) << line;
  return line;
}

TEST(ConsulDevServerBinaryTest, ServesOnAPickedPortAndExitsZeroOnSigterm) {
  Child child({"--http-addr=127.0.0.1:0", "--session-ttl-min=1s"});
  ASSERT_TRUE(child.started());
  const std::string line = child.ReadStdoutLine(absl::Seconds(10));
  const int port = ListeningPort(line);
  ASSERT_GT(port, 0) << "line: " << line;
  TestHttpClient client("http://127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(client.Put("/v1/kv/hello", "world").body, "true");
  EXPECT_EQ(client.Get("/v1/kv/hello?raw").body, "world");
  child.Signal(SIGTERM);
  EXPECT_EQ(child.WaitExit(absl::Seconds(10)), 0);
}

TEST(ConsulDevServerBinaryTest, SigintAlsoStopsItWithExitZero) {
  Child child({"--http-addr=127.0.0.1:0"});
  ASSERT_GT(ListeningPort(child.ReadStdoutLine(absl::Seconds(10))), 0);
  child.Signal(SIGINT);
  EXPECT_EQ(child.WaitExit(absl::Seconds(10)), 0);
}

TEST(ConsulDevServerBinaryTest, BadDurationFlagExitsTwoWithOneLineNamingIt) {
  const std::string error = RefusedStart({"--http-addr=127.0.0.1:0", "--session-ttl-min=soon"});
  EXPECT_NE(error.find("--session-ttl-min"), std::string::npos) << error;
}

TEST(ConsulDevServerBinaryTest, BadAddressExitsTwoNamingTheFlag) {
  const std::string error = RefusedStart({"--http-addr=no-port-here"});
  EXPECT_NE(error.find("--http-addr"), std::string::npos) << error;
}

TEST(ConsulDevServerBinaryTest, UnknownFlagAndBadBooleanExitTwo) {
  EXPECT_NE(RefusedStart({"--no-such-flag=1"}).find("--no-such-flag"), std::string::npos);
  EXPECT_NE(RefusedStart({"--enable-fault-injection=maybe"}).find("--enable-fault-injection"),
            std::string::npos);
}

// A file holding `content`, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/devserver-token-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) return;
    path_ = name;
    const bool written =
        write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
    close(fd);
    if (!written) path_.clear();
  }
  ~TempFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ConsulDevServerBinaryTest, SaysAtStartThatItIsForDevelopmentOnlyAndHasNoAcls) {
  Child child({"--http-addr=127.0.0.1:0"});
  ASSERT_GT(ListeningPort(child.ReadStdoutLine(absl::Seconds(10))), 0);
  const std::string banner = child.ReadStderrLine(absl::Seconds(10));
  EXPECT_NE(banner.find("for development and tests only"), std::string::npos) << banner;
  EXPECT_NE(banner.find("no ACLs"), std::string::npos) << banner;
  child.Signal(SIGTERM);
  EXPECT_EQ(child.WaitExit(absl::Seconds(10)), 0);
}

TEST(ConsulDevServerBinaryTest, TakesItsMasterTokenFromAFile) {
  const std::string token = "5ea0c6a4-0c2b-4b8c-9a51-token-in-a-file";
  TempFile file(token + "\n");
  ASSERT_FALSE(file.path().empty());
  Child child({"--http-addr=127.0.0.1:0", "--acl-master-token-file=" + file.path()});
  const int port = ListeningPort(child.ReadStdoutLine(absl::Seconds(10)));
  ASSERT_GT(port, 0);
  const std::string banner = child.ReadStderrLine(absl::Seconds(10));
  EXPECT_NE(banner.find("every API request must carry the master token"), std::string::npos)
      << banner;
  EXPECT_EQ(banner.find(token), std::string::npos) << banner;
  TestHttpClient client("http://127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(client.Get("/v1/kv/a").status, 403);
  EXPECT_EQ(client.Do("GET", "/v1/kv/a", "", {"X-Consul-Token: " + token}).status, 404);
  child.Signal(SIGTERM);
  EXPECT_EQ(child.WaitExit(absl::Seconds(10)), 0);
}

TEST(ConsulDevServerBinaryTest, ABadTokenFileExitsTwoNamingTheFileNeverTheToken) {
  EXPECT_NE(
      RefusedStart({"--acl-master-token-file=/nonexistent/token"}).find("'/nonexistent/token'"),
      std::string::npos);
  TempFile empty(" \n");
  EXPECT_NE(RefusedStart({"--acl-master-token-file=" + empty.path()}).find("is empty"),
            std::string::npos);
  TempFile two_lines("secret-one\nsecret-two\n");
  const std::string error = RefusedStart({"--acl-master-token-file=" + two_lines.path()});
  EXPECT_NE(error.find("more than one line"), std::string::npos) << error;
  EXPECT_EQ(error.find("secret"), std::string::npos) << error;
  TempFile good("t");
  EXPECT_NE(RefusedStart({"--acl-master-token=x", "--acl-master-token-file=" + good.path()})
                .find("give one of them"),
            std::string::npos);
}

TEST(ConsulDevServerBinaryTest, ABadConnectionLimitOrReadTimeoutExitsTwoNamingTheFlag) {
  EXPECT_NE(RefusedStart({"--http-max-conns-per-client=lots"}).find("--http-max-conns-per-client"),
            std::string::npos);
  EXPECT_NE(RefusedStart({"--read-timeout=0s"}).find("--read-timeout"), std::string::npos);
}

}  // namespace
}  // namespace registry::devserver
