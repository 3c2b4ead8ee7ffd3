// SPDX-License-Identifier: Apache-2.0
// tools/print_line.h
//
// How registryctl prints a line that another process waits for ("ready", "registryctl:
// watching KEY", one event's JSON): whole, then flushed at once.
//
// Thread safety: any thread. The line and its newline are written under the stream's own lock
// (flockfile), so a line another thread prints at the same moment with one stdio call (such as
// a connection state change on stderr) comes before or after it, never inside it.
#ifndef REGISTRY_TOOLS_PRINT_LINE_H_
#define REGISTRY_TOOLS_PRINT_LINE_H_

#include <cstdio>

#include "absl/strings/string_view.h"

namespace registry::tools {

// Prints `line` and a newline on `out`, flushed at once so a parent process sees it immediately.
void PrintLine(std::FILE* out, absl::string_view line);

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_PRINT_LINE_H_
