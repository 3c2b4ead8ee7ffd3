// SPDX-License-Identifier: Apache-2.0
// integration/plugin/registryctl_values_test.cc
//
// registryctl's keys and values at their limits: a value read from standard input, a huge key
// in an error message.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/plugin/registryctl_fixture.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using ::testing::HasSubstr;

// Each layer names the key in its message (registryctl, the repository, the key's check):
// each quotes at most kShownInMessage bytes of it (a message of 307 KB before).
TEST_F(RegistryctlTest, AHundredKilobyteKeyIsNamedInAMessageOfAFewHundredBytes) {
  const std::string key = "/" + std::string(100 * 1024, 'a') + "/../b";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"put", key, "v"}, {"get", key}, {"exists", key}}) {
    RunResult run = RunCtl(args);
    EXPECT_EQ(run.exit_code, 2) << args[0];
    EXPECT_THAT(run.err, HasSubstr(absl::StrCat("/aaaa")));
    EXPECT_THAT(run.err, HasSubstr(absl::StrCat("... (", key.size(), " bytes)")));
    EXPECT_LT(run.err.size(), 2048u) << args[0] << ": " << run.err.substr(0, 300);
  }
}

// A value of "-" is standard input, whole and byte for byte (a value over 128 KiB cannot be an
// argument); over Consul's 512 KiB it is refused, and nothing is written.
TEST_F(RegistryctlTest, PutReadsAValueOfDashFromStandardInput) {
  std::string value = "line one\nline two\n";
  for (int i = 0; i < 200 * 1024; ++i) value += static_cast<char>('a' + i % 26);
  const std::string file = WriteTempFile("value", value);
  RunResult put = RunProcess(ShellWithStdin(Ctl({"put", "/big", "-"}), file));
  ASSERT_EQ(put.exit_code, 0) << put.err;
  const std::string got = RunCtl({"get", "/big"}).out;
  // Compared whole, but never printed whole: 200 KB would drown the log.
  EXPECT_TRUE(got == value + "\n") << "got " << got.size() << " bytes: " << got.substr(0, 40);

  const std::string huge = WriteTempFile("huge", std::string(512 * 1024 + 1, 'h'));
  RunResult refused = RunProcess(ShellWithStdin(Ctl({"put", "/huge", "-"}), huge));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("the value on standard input is longer than 524288 bytes"));
  EXPECT_EQ(RunCtl({"exists", "/huge"}).exit_code, 1);
}

}  // namespace
}  // namespace registry::integration
