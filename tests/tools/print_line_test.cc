// SPDX-License-Identifier: Apache-2.0
// tests/tools/print_line_test.cc
//
// registryctl's PrintLine (tools/print_line.h): a line another thread prints at the same moment
// never lands inside it. `registryctl watch` prints "registryctl: watching KEY" on stderr while
// its connection listener may print "registryctl: connection CONNECTED" there too; a script
// waiting for the first line as a whole line must find it.
#include "tools/print_line.h"

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace registry::tools {
namespace {

constexpr int kLinesPerThread = 20000;
constexpr char kPrinted[] = "registryctl: watching /nodes/compute_nodes/online/proxy";
constexpr char kConcurrent[] = "registryctl: connection CONNECTED";

// Everything written to `file` so far.
std::string Contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string contents;
  char buffer[1 << 16];
  for (size_t read; (read = std::fread(buffer, 1, sizeof(buffer), file)) > 0;) {
    contents.append(buffer, read);
  }
  return contents;
}

TEST(PrintLineTest, ALineFromAnotherThreadNeverLandsInsideIt) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  // Unbuffered, like stderr: every stdio call is its own write.
  ASSERT_EQ(std::setvbuf(file, nullptr, _IONBF, 0), 0);
  std::thread other([file] {
    for (int i = 0; i < kLinesPerThread; ++i) std::fprintf(file, "%s\n", kConcurrent);
  });
  for (int i = 0; i < kLinesPerThread; ++i) PrintLine(file, kPrinted);
  other.join();

  int printed = 0;
  int concurrent = 0;
  std::vector<std::string> torn;
  for (absl::string_view line : absl::StrSplit(Contents(file), '\n', absl::SkipEmpty())) {
    if (line == kPrinted) {
      ++printed;
    } else if (line == kConcurrent) {
      ++concurrent;
    } else if (torn.size() < 3) {
      torn.emplace_back(line);
    }
  }
  std::fclose(file);
  EXPECT_EQ(printed, kLinesPerThread);
  EXPECT_EQ(concurrent, kLinesPerThread);
  EXPECT_TRUE(torn.empty()) << "torn line: " << torn.front();
}

TEST(PrintLineTest, PrintsTheBytesAndOneNewline) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  PrintLine(file, std::string("a\0b", 3));
  PrintLine(file, "");
  EXPECT_EQ(Contents(file), std::string("a\0b\n\n", 5));
  std::fclose(file);
}

}  // namespace
}  // namespace registry::tools
