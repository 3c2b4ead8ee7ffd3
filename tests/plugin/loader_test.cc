// SPDX-License-Identifier: Apache-2.0
// tests/plugin/loader_test.cc
//
// The host-side loader: finding a plugin for a type, and every way loading can fail.
#include "host/loader.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::plugin {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kPluginDir = REGISTRY_TEST_PLUGIN_DIR;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string base = dir != nullptr ? dir : "/tmp";
  std::string path = base + "/registry_loader_test.XXXXXX";
  if (mkdtemp(path.data()) == nullptr) return base;
  return path;
}

TEST(PluginFileNameTest, TypeMapsToLibraryNameCaseInsensitively) {
  EXPECT_EQ(*PluginFileNameForType("Consul"), "libregistry_consul.so");
  EXPECT_EQ(*PluginFileNameForType("consul"), "libregistry_consul.so");
  EXPECT_EQ(*PluginFileNameForType("CONSUL"), "libregistry_consul.so");
  EXPECT_EQ(*PluginFileNameForType("my_store-2"), "libregistry_my_store-2.so");
}

TEST(PluginFileNameTest, TypeThatCouldNameAPathIsRejectedNamingIt) {
  for (const char* type : {"", "../consul", "a/b", "con sul", "consul.so"}) {
    absl::StatusOr<std::string> name = PluginFileNameForType(type);
    ASSERT_FALSE(name.ok()) << type;
    EXPECT_EQ(name.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(name.status().message(), HasSubstr(absl::StrCat("'", type, "'")));
  }
}

TEST(DefaultSearchPathTest, StartsBesideTheExecutableThenFollowsTheEnvironment) {
  ASSERT_EQ(setenv(kPluginPathEnv, "/opt/a::/opt/b", 1), 0);
  std::vector<std::string> path = DefaultPluginSearchPath();
  unsetenv(kPluginPathEnv);
  const std::string exe_dir = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0], exe_dir + "/../lib");
  EXPECT_EQ(path[1], "/opt/a");
  EXPECT_EQ(path[2], "/opt/b");
}

TEST(LoadPluginTest, PluginIsFoundForItsTypeInAnyLetterCase) {
  for (const char* type : {"Memory", "memory", "MEMORY"}) {
    absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
        LoadPluginForType(type, {"/nonexistent", kPluginDir});
    ASSERT_TRUE(library.ok()) << library.status();
    EXPECT_EQ((*library)->repository_type(), "Memory");
    EXPECT_EQ((*library)->abi_version(), REGISTRY_PLUGIN_ABI_VERSION_CURRENT);
    EXPECT_EQ((*library)->path(), kPluginDir + "/libregistry_memory.so");
  }
}

TEST(LoadPluginTest, MissingPluginNamesTheFileAndEveryDirectorySearched) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("Absent", {"/nonexistent/one", kPluginDir});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(library.status().message(),
              AllOf(HasSubstr("libregistry_absent.so"), HasSubstr("/nonexistent/one"),
                    HasSubstr(kPluginDir), HasSubstr(kPluginPathEnv)));
}

TEST(LoadPluginTest, MissingFileGivenByPathIsNotFoundNamingIt) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginFile("/nonexistent/libregistry_x.so");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(library.status().message(), HasSubstr("/nonexistent/libregistry_x.so"));
}

TEST(LoadPluginTest, FileThatIsNotASharedLibraryFailsWithTheLoadersMessage) {
  const std::string dir = TempDir();
  const std::string path = dir + "/libregistry_text.so";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("not an ELF file\n", f);
  fclose(f);
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library = LoadPluginForType("text", {dir});
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(library.status().message(), AllOf(HasSubstr(path), HasSubstr("cannot be loaded")));
}

TEST(LoadPluginTest, MissingInitSymbolNamesTheSymbolAndTheFile) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("nosymbol", {kPluginDir});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      library.status().message(),
      AllOf(HasSubstr("RegistryPluginInit"), HasSubstr(kPluginDir + "/libregistry_nosymbol.so")));
}

TEST(LoadPluginTest, PluginRejectingTheHostVersionIsRefusedNamingBothVersions) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("futureabi", {kPluginDir});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(library.status().message(),
              AllOf(HasSubstr("libregistry_futureabi.so"), HasSubstr("host ABI 1.8"),
                    HasSubstr("speaks ABI 2.0")));
}

TEST(LoadPluginTest, HostAskingForAnUnknownMajorIsRefusedByThePluginNamingBothVersions) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(7, 3));
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(library.status().message(),
              AllOf(HasSubstr("host ABI 7.3"), HasSubstr("UNIMPLEMENTED"),
                    HasSubstr("speaks ABI 1.8"), HasSubstr("asked for 7.3")));
}

TEST(LoadPluginTest, NewerMinorHostNegotiatesDownToThePluginsMinor) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(1, 9));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->abi_version(), REGISTRY_PLUGIN_ABI_VERSION_CURRENT);
}

TEST(LoadPluginTest, PluginReturningAnIncompleteTableIsRefused) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("incomplete", {kPluginDir});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(library.status().message(),
              AllOf(HasSubstr("libregistry_incomplete.so"), HasSubstr("incomplete")));
}

TEST(LoadPluginTest, PluginServingAnotherTypeThanItsFileNameIsRefused) {
  const std::string dir = TempDir();
  std::filesystem::copy_file(kPluginDir + "/libregistry_memory.so", dir + "/libregistry_other.so");
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library = LoadPluginForType("Other", {dir});
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(library.status().message(), AllOf(HasSubstr("'Memory'"), HasSubstr("'Other'")));
}

TEST(PluginInitTest, PluginFillsOnlyWhatFitsInAnOlderHostsSmallerTable) {
  void* handle = dlopen((kPluginDir + "/libregistry_memory.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto init = reinterpret_cast<RegistryPluginInitFunc>(dlsym(handle, REGISTRY_PLUGIN_INIT_SYMBOL));
  ASSERT_NE(init, nullptr);

  // A host whose table ends after create_from_yaml: nothing past it may be written.
  RegistryPluginApi api;
  std::memset(&api, 0xAB, sizeof(api));
  api.struct_size = offsetof(RegistryPluginApi, create_from_yaml) + sizeof(api.create_from_yaml);
  RegistryError error{};
  ASSERT_EQ(init(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, &api, &error), REGISTRY_OK);
  EXPECT_EQ(api.struct_size,
            offsetof(RegistryPluginApi, create_from_yaml) + sizeof(api.create_from_yaml));
  EXPECT_NE(api.create_from_yaml, nullptr);
  EXPECT_TRUE(REGISTRY_PLUGIN_API_HAS(&api, create_from_yaml));
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, create_from_yaml_file));
  const unsigned char* rest = reinterpret_cast<const unsigned char*>(&api) + api.struct_size;
  for (size_t i = 0; i < sizeof(api) - api.struct_size; ++i) ASSERT_EQ(rest[i], 0xAB) << i;
  dlclose(handle);
}

TEST(PluginInitTest, MissingOrTooSmallTableIsInvalidArgumentWithoutAMessageToFree) {
  void* handle = dlopen((kPluginDir + "/libregistry_memory.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto init = reinterpret_cast<RegistryPluginInitFunc>(dlsym(handle, REGISTRY_PLUGIN_INIT_SYMBOL));
  ASSERT_NE(init, nullptr);
  RegistryPluginApi api{};
  api.struct_size = 4;
  RegistryError error{};
  EXPECT_EQ(init(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, &api, &error), REGISTRY_INVALID_ARGUMENT);
  // No release_error fits in such a table, so the plugin must not allocate a message.
  EXPECT_EQ(error.message, nullptr);
  EXPECT_EQ(init(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, nullptr, &error), REGISTRY_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, nullptr);
  dlclose(handle);
}

}  // namespace
}  // namespace registry::plugin
