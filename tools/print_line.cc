// SPDX-License-Identifier: Apache-2.0
// tools/print_line.cc
#include "tools/print_line.h"

#include <stdio.h>  // flockfile (POSIX)

namespace registry::tools {

void PrintLine(std::FILE* out, absl::string_view line) {
  // Each stdio call locks the stream on its own: without holding the lock across the two
  // writes, another thread's line could come between the text and its newline.
  flockfile(out);
  std::fwrite(line.data(), 1, line.size(), out);
  std::fputc('\n', out);
  std::fflush(out);
  funlockfile(out);
}

}  // namespace registry::tools
