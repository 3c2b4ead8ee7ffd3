// SPDX-License-Identifier: Apache-2.0
// tools/descriptors.cc
#include "tools/descriptors.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace registry::tools {
namespace {

// Descriptors above 2 open now, from /proc/self/fd (without the listing's own).
std::vector<int> OpenDescriptors() {
  std::vector<int> open;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return open;
  const int own = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (*end == '\0' && end != entry->d_name && fd > 2 && fd != own) {
      open.push_back(static_cast<int>(fd));
    }
  }
  closedir(dir);
  return open;
}

std::vector<int>& Inherited() {
  static std::vector<int>* inherited = new std::vector<int>();
  return *inherited;
}

}  // namespace

void RememberInheritedDescriptors() { Inherited() = OpenDescriptors(); }

void CloseOwnDescriptorsOnExec() {
  const std::vector<int>& inherited = Inherited();
  for (int fd : OpenDescriptors()) {
    if (std::find(inherited.begin(), inherited.end(), fd) != inherited.end()) continue;
    // A descriptor closed by another thread since the listing fails here harmlessly (EBADF).
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

}  // namespace registry::tools
