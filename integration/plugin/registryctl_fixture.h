// SPDX-License-Identifier: Apache-2.0
// integration/plugin/registryctl_fixture.h
//
// RegistryctlTest: registryctl as real processes against the suite's server, each test in a
// namespace of its own (so tests share one server), with helpers to run the tool, hold keys and
// feed it files. Used by the registryctl_test executable's files.
#ifndef INTEGRATION_PLUGIN_REGISTRYCTL_FIXTURE_H_
#define INTEGRATION_PLUGIN_REGISTRYCTL_FIXTURE_H_

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {

class RegistryctlTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    ServerProcessTest::SetUp();
    if (HasFatalFailure()) return;
    namespace_ =
        absl::StrCat("ctl_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // registryctl with --servers/--namespace of this test (and the token, through --token-file:
  // never on a command line), then `args`.
  std::vector<std::string> Ctl(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {REGISTRYCTL_BIN, "--servers=" + server_address(),
                                     "--namespace=" + namespace_};
    if (!token().empty()) argv.push_back("--token-file=" + TokenFile());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  RunResult RunCtl(const std::vector<std::string>& args) const { return RunProcess(Ctl(args)); }

  // `argv` run by a shell with standard input read from `file`.
  static std::vector<std::string> ShellWithStdin(const std::vector<std::string>& argv,
                                                 const std::string& file) {
    std::vector<std::string> shell = {"/bin/sh", "-c", "f=$1; shift; exec \"$@\" < \"$f\"", "sh",
                                      file};
    shell.insert(shell.end(), argv.begin(), argv.end());
    return shell;
  }

  // A file of this process's temp dir holding `content`; its path.
  static std::string WriteTempFile(const std::string& name, const std::string& content) {
    const std::string path = ProcessTempDir() + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // A file holding the suite's token, written once.
  static const std::string& TokenFile() {
    static const std::string* const kPath = [] {
      auto* path = new std::string(absl::StrCat(ProcessTempDir(), "/registryctl.token"));
      std::ofstream(*path) << token() << "\n";
      return path;
    }();
    return *kPath;
  }

  // Writes a registry YAML with a 1 s session TTL and returns its path.
  std::string WriteConfig(const std::string& ns) const {
    const std::string path = absl::StrCat(ProcessTempDir(), "/", ns, ".yaml");
    std::ofstream file(path);
    file << "mode:\n"
            "  type: Cluster\n"
            "  repository:\n"
            "    type: Consul\n"
            "    props:\n"
            "      namespace: "
         << ns << "\n      server-lists: " << server_address()
         << (token().empty() ? "" : "\n      token: " + token())
         << "\n      timeToLiveSeconds: 1\n      sessionLockDelayMilliseconds: 0\n";
    return path;
  }

  // Starts a holding command (ephemeral/claim) and waits for its "ready" line.
  std::unique_ptr<Subprocess> StartHolding(const std::vector<std::string>& argv) {
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(argv);
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return nullptr;
    std::optional<std::string> line = (*process)->ReadLine(absl::Now() + absl::Seconds(10));
    EXPECT_EQ(line, "ready") << "stderr: " << (*process)->err();
    return std::move(*process);
  }

  std::string namespace_;
};

}  // namespace registry::integration

#endif  // INTEGRATION_PLUGIN_REGISTRYCTL_FIXTURE_H_
