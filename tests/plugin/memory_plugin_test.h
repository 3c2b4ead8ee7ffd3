// SPDX-License-Identifier: Apache-2.0
// tests/plugin/memory_plugin_test.h
//
// The base fixture of the tests that drive the in-memory test plugin (memory_plugin.cc) through
// a real dlopen: SetUp loads it with the loader and opens one repository, from a YAML block
// that names it (the way a middleware configures a plugin).
#ifndef TESTS_PLUGIN_MEMORY_PLUGIN_TEST_H_
#define TESTS_PLUGIN_MEMORY_PLUGIN_TEST_H_

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"

namespace registry::plugin {

class MemoryPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
        LoadPluginForType("memory", {REGISTRY_TEST_PLUGIN_DIR});
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *library;
    absl::StatusOr<std::unique_ptr<PluginRepository>> repository =
        library_->CreateFromYaml("mode:\n  repository:\n    type: Memory\n");
    ASSERT_TRUE(repository.ok()) << repository.status();
    repository_ = std::move(*repository);
  }

  std::shared_ptr<PluginLibrary> library_;
  std::unique_ptr<PluginRepository> repository_;
};

}  // namespace registry::plugin

#endif  // TESTS_PLUGIN_MEMORY_PLUGIN_TEST_H_
