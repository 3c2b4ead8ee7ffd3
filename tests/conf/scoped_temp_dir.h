// SPDX-License-Identifier: Apache-2.0
// tests/conf/scoped_temp_dir.h
//
// A directory of the test's own under ::testing::TempDir(), removed with everything in it when
// the object goes, so that concurrent test runs never write the same file.
#ifndef REGISTRY_TESTS_CONF_SCOPED_TEMP_DIR_H_
#define REGISTRY_TESTS_CONF_SCOPED_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace registry::conf {

class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string name = ::testing::TempDir() + "/registry_conf_test.XXXXXX";
    if (mkdtemp(name.data()) != nullptr) path_ = name;
    EXPECT_FALSE(path_.empty()) << "cannot create a directory like " << name;
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `content` to `name` in the directory; returns the file's path.
  std::string Write(const std::string& name, const std::string& content) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << content;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace registry::conf

#endif  // REGISTRY_TESTS_CONF_SCOPED_TEMP_DIR_H_
