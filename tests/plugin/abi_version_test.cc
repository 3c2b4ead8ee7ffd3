// SPDX-License-Identifier: Apache-2.0
// tests/plugin/abi_version_test.cc
//
// Minor-version compatibility of the C ABI: hosts built for 1.0 to 1.7 keep working with the
// current plugin (and get nothing written past their table), and a current host loading a plugin
// from before 1.1 negotiates down and never calls the entries that plugin lacks.
#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"

namespace registry::plugin {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kPluginDir = REGISTRY_TEST_PLUGIN_DIR;

// dlopen()s the memory plugin and returns its init function; closes it on destruction.
class RawPlugin {
 public:
  RawPlugin() {
    handle_ = dlopen((kPluginDir + "/libregistry_memory.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      init_ = reinterpret_cast<RegistryPluginInitFunc>(dlsym(handle_, REGISTRY_PLUGIN_INIT_SYMBOL));
    }
  }
  ~RawPlugin() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  RegistryPluginInitFunc init() const { return init_; }

 private:
  void* handle_ = nullptr;
  RegistryPluginInitFunc init_ = nullptr;
};

// Loads the plugin as a host built for 1.`minor`, whose table is `size` bytes: the plugin
// negotiates that minor, fills `size` bytes and writes nothing past them.
void ExpectOlderHostGetsItsTableAndNothingPastIt(uint32_t minor, size_t size,
                                                 RegistryPluginApi* api) {
  RawPlugin plugin;
  ASSERT_NE(plugin.init(), nullptr) << dlerror();
  std::memset(api, 0xAB, sizeof(*api));
  std::memset(api, 0, size);
  api->struct_size = size;
  RegistryError error{};
  ASSERT_EQ(plugin.init()(REGISTRY_PLUGIN_ABI_VERSION(1, minor), api, &error), REGISTRY_OK);
  EXPECT_EQ(api->abi_version, REGISTRY_PLUGIN_ABI_VERSION(1, minor));
  EXPECT_EQ(api->struct_size, size);
  const unsigned char* rest = reinterpret_cast<const unsigned char*>(api) + size;
  for (size_t i = 0; i < sizeof(*api) - size; ++i) ASSERT_EQ(rest[i], 0xAB) << i;
}

TEST(AbiVersionTest, HostBuiltForOnePointZeroGetsExactlyTheOnePointZeroTable) {
  RegistryPluginApi api;
  ExpectOlderHostGetsItsTableAndNothingPastIt(0, REGISTRY_PLUGIN_API_SIZE_1_0, &api);
  EXPECT_NE(api.destroy, nullptr);
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, add_data_listener));
}

TEST(AbiVersionTest, HostAskingForOnePointZeroWithALargerTableGetsNoLaterEntries) {
  RawPlugin plugin;
  ASSERT_NE(plugin.init(), nullptr) << dlerror();
  RegistryPluginApi api{};
  api.struct_size = sizeof(api);
  RegistryError error{};
  ASSERT_EQ(plugin.init()(REGISTRY_PLUGIN_ABI_VERSION(1, 0), &api, &error), REGISTRY_OK);
  EXPECT_EQ(api.abi_version, REGISTRY_PLUGIN_ABI_VERSION(1, 0));
  EXPECT_EQ(api.struct_size, REGISTRY_PLUGIN_API_SIZE_1_0);
  EXPECT_EQ(api.add_data_listener, nullptr);
  EXPECT_EQ(api.get_lock, nullptr);
}

TEST(AbiVersionTest, CurrentHostGetsEveryEntryOfOnePointEight) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir});
  ASSERT_TRUE(library.ok()) << library.status();
  const RegistryPluginApi& api = (*library)->api();
  EXPECT_EQ(api.abi_version, REGISTRY_PLUGIN_ABI_VERSION(1, 8));
  EXPECT_EQ(api.struct_size, REGISTRY_PLUGIN_API_SIZE_1_8);
  EXPECT_EQ(REGISTRY_PLUGIN_API_SIZE_1_8, sizeof(RegistryPluginApi));
  EXPECT_NE(api.add_data_listener, nullptr);
  EXPECT_NE(api.delete_if_held, nullptr);
  EXPECT_NE(api.get_fair_lock, nullptr);
  EXPECT_NE(api.get_semaphore, nullptr);
  EXPECT_NE(api.get_read_write_lock, nullptr);
  EXPECT_NE(api.set_log_sink, nullptr);
  EXPECT_NE(api.metrics_text, nullptr);
  EXPECT_NE(api.visit_metrics, nullptr);
  EXPECT_NE(api.persist_batch, nullptr);
  EXPECT_NE(api.list_entries, nullptr);
  EXPECT_NE(api.store_key_prefix, nullptr);
  EXPECT_NE(api.check_batch, nullptr);
}

TEST(AbiVersionTest, HostBuiltForOnePointSevenGetsItsTableAndNoExportEntries) {
  RegistryPluginApi api;
  ExpectOlderHostGetsItsTableAndNothingPastIt(7, REGISTRY_PLUGIN_API_SIZE_1_7, &api);
  EXPECT_NE(api.persist_batch, nullptr);
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, list_entries));
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, check_batch));
}

TEST(AbiVersionTest, HostSpeakingOnePointSevenIsToldExportAndImportNeedOnePointEight) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(1, 7));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->api().struct_size, REGISTRY_PLUGIN_API_SIZE_1_7);
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_FALSE((*repository)->SupportsExport());
  size_t bad_index = 99;
  for (const absl::Status& status :
       {(*repository)->ListEntries("/").status(), (*repository)->StoreKeyPrefix().status(),
        (*repository)->CheckBatch({{"/k", "v"}}, &bad_index)}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("ABI 1.7"), HasSubstr("export and import need 1.8")));
  }
  EXPECT_EQ(bad_index, 1u) << "no entry is at fault";
  // What 1.7 has still works: the batch itself.
  EXPECT_TRUE((*repository)->PersistBatch({{"/k", "v"}}).ok());
}

TEST(AbiVersionTest, HostBuiltForOnePointSixGetsItsTableAndNoMetrics) {
  RegistryPluginApi api;
  ExpectOlderHostGetsItsTableAndNothingPastIt(6, REGISTRY_PLUGIN_API_SIZE_1_6, &api);
  EXPECT_NE(api.set_log_sink, nullptr);
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, metrics_text));
}

TEST(AbiVersionTest, HostSpeakingOnePointSixIsToldMetricsNeedOnePointSeven) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(1, 6));
  ASSERT_TRUE(library.ok()) << library.status();
  for (const absl::Status& status :
       {(*library)->MetricsText().status(), (*library)->Metrics().status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(status.message(), AllOf(HasSubstr("ABI 1.6"), HasSubstr("metrics need 1.7")));
  }
}

TEST(AbiVersionTest, HostBuiltForOnePointFiveGetsItsTableAndNoLogSink) {
  RegistryPluginApi api;
  ExpectOlderHostGetsItsTableAndNothingPastIt(5, REGISTRY_PLUGIN_API_SIZE_1_5, &api);
  EXPECT_NE(api.get_read_write_lock, nullptr);
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, set_log_sink));
}

TEST(AbiVersionTest, HostBuiltForOnePointFourGetsItsTableAndNothingPastIt) {
  RegistryPluginApi api;
  ExpectOlderHostGetsItsTableAndNothingPastIt(4, REGISTRY_PLUGIN_API_SIZE_1_4, &api);
  EXPECT_NE(api.get_semaphore, nullptr);
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, get_read_write_lock));
}

TEST(AbiVersionTest, HostSpeakingOnePointFourGetsSemaphoresButNoReadWriteLocks) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(1, 4));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->abi_version(), REGISTRY_PLUGIN_ABI_VERSION(1, 4));
  EXPECT_EQ((*library)->api().struct_size, REGISTRY_PLUGIN_API_SIZE_1_4);
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_TRUE((*repository)->SupportsSemaphores());
  EXPECT_FALSE((*repository)->SupportsReadWriteLocks());
  for (const absl::Status& side :
       {(*repository)->GetReadLock("rw").status(), (*repository)->GetWriteLock("rw").status()}) {
    EXPECT_EQ(side.code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(side.message(),
                AllOf(HasSubstr("ABI 1.4"), HasSubstr("read/write locks need 1.5")));
  }
}

TEST(AbiVersionTest, PluginWhoseLockProviderHasNoReadWriteLocksSaysSoByName) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir});
  ASSERT_TRUE(library.ok()) << library.status();
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_TRUE((*repository)->SupportsReadWriteLocks());
  absl::StatusOr<std::unique_ptr<PluginLock>> read = (*repository)->GetReadLock("cfg/a");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(read.status().message(), HasSubstr("no read/write locks (read lock 'cfg/a')"));
  absl::StatusOr<std::unique_ptr<PluginLock>> write = (*repository)->GetWriteLock("cfg/a");
  ASSERT_FALSE(write.ok());
  EXPECT_THAT(write.status().message(), HasSubstr("no read/write locks (write lock 'cfg/a')"));
}

TEST(AbiVersionTest, ReadWriteLockSideOtherThanZeroOrOneIsAnInvalidArgumentNamingIt) {
  RawPlugin plugin;
  ASSERT_NE(plugin.init(), nullptr) << dlerror();
  RegistryPluginApi api{};
  api.struct_size = sizeof(api);
  RegistryError error{};
  ASSERT_EQ(plugin.init()(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, &api, &error), REGISTRY_OK);
  RegistryRepository* repository = nullptr;
  ASSERT_EQ(api.create_from_props(nullptr, nullptr, 0, &repository, &error), REGISTRY_OK);
  for (int32_t write : {2, -1}) {
    // A stale pointer from the host's last call: a failing call must leave NULL in its place.
    RegistryLock* lock = reinterpret_cast<RegistryLock*>(&error);
    ASSERT_EQ(api.get_read_write_lock(repository, "rw", write, &lock, &error),
              REGISTRY_INVALID_ARGUMENT);
    EXPECT_EQ(lock, nullptr);
    ASSERT_NE(error.message, nullptr);
    EXPECT_THAT(error.message, HasSubstr(absl::StrCat("or 1 (the write side), got ", write, " ")));
    api.release_error(&error);
  }
  api.destroy(repository);
}

TEST(AbiVersionTest, HostBuiltForOnePointThreeGetsItsTableAndNothingPastIt) {
  RegistryPluginApi api;
  ExpectOlderHostGetsItsTableAndNothingPastIt(3, REGISTRY_PLUGIN_API_SIZE_1_3, &api);
  EXPECT_NE(api.get_fair_lock, nullptr);
  EXPECT_FALSE(REGISTRY_PLUGIN_API_HAS(&api, get_semaphore));
}

TEST(AbiVersionTest, HostSpeakingOnePointThreeGetsFairLocksButNoSemaphores) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(1, 3));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->abi_version(), REGISTRY_PLUGIN_ABI_VERSION(1, 3));
  EXPECT_EQ((*library)->api().struct_size, REGISTRY_PLUGIN_API_SIZE_1_3);
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_TRUE((*repository)->SupportsFairLocks());
  EXPECT_FALSE((*repository)->SupportsSemaphores());
  absl::StatusOr<std::unique_ptr<PluginLock>> semaphore = (*repository)->GetSemaphore("s", 2);
  ASSERT_FALSE(semaphore.ok());
  EXPECT_EQ(semaphore.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(semaphore.status().message(),
              AllOf(HasSubstr("ABI 1.3"), HasSubstr("semaphores need 1.4")));
}

TEST(AbiVersionTest, PluginWhoseLockProviderHasNoSemaphoresSaysSoByName) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir});
  ASSERT_TRUE(library.ok()) << library.status();
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_TRUE((*repository)->SupportsSemaphores());
  absl::StatusOr<std::unique_ptr<PluginLock>> semaphore = (*repository)->GetSemaphore("pool/a", 3);
  ASSERT_FALSE(semaphore.ok());
  EXPECT_EQ(semaphore.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(semaphore.status().message(),
              HasSubstr("no semaphores (semaphore 'pool/a', limit 3)"));
}

TEST(AbiVersionTest, HostSpeakingOnePointTwoGetsLocksButNoFairLocks) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(1, 2));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->abi_version(), REGISTRY_PLUGIN_ABI_VERSION(1, 2));
  EXPECT_EQ((*library)->api().struct_size, REGISTRY_PLUGIN_API_SIZE_1_2);
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_TRUE((*repository)->SupportsLocks());
  EXPECT_FALSE((*repository)->SupportsFairLocks());
  absl::StatusOr<std::unique_ptr<PluginLock>> fair = (*repository)->GetFairLock("l");
  ASSERT_FALSE(fair.ok());
  EXPECT_EQ(fair.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(fair.status().message(),
              AllOf(HasSubstr("ABI 1.2"), HasSubstr("fair locks need 1.3")));
}

TEST(AbiVersionTest, PluginWhoseLockProviderHasNoFairLocksSaysSoByName) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir});
  ASSERT_TRUE(library.ok()) << library.status();
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  absl::StatusOr<std::unique_ptr<PluginLock>> fair = (*repository)->GetFairLock("queue/a");
  ASSERT_FALSE(fair.ok());
  EXPECT_EQ(fair.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(fair.status().message(), HasSubstr("no fair locks (fair lock 'queue/a')"));
}

TEST(AbiVersionTest, HostSpeakingOnePointOneGetsWatchesButNoLocks) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library =
      LoadPluginForType("memory", {kPluginDir}, REGISTRY_PLUGIN_ABI_VERSION(1, 1));
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->abi_version(), REGISTRY_PLUGIN_ABI_VERSION(1, 1));
  EXPECT_EQ((*library)->api().struct_size, REGISTRY_PLUGIN_API_SIZE_1_1);
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_TRUE((*repository)->SupportsWatches());
  EXPECT_TRUE((*repository)->AddWatch("/k", [](const DataChangedEvent&) {}).ok());
  absl::StatusOr<std::unique_ptr<PluginLock>> lock = (*repository)->GetLock("l");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(lock.status().message(), AllOf(HasSubstr("ABI 1.1"), HasSubstr("locks need 1.2")));
}

TEST(AbiVersionTest, PluginFromBeforeOnePointOneNegotiatesDownAndItsMissingEntriesAreNotCalled) {
  absl::StatusOr<std::shared_ptr<PluginLibrary>> library = LoadPluginForType("old", {kPluginDir});
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->abi_version(), REGISTRY_PLUGIN_ABI_VERSION(1, 0));
  EXPECT_EQ((*library)->api().struct_size, REGISTRY_PLUGIN_API_SIZE_1_0);
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository = (*library)->CreateFromProps({});
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_FALSE((*repository)->SupportsWatches());
  EXPECT_FALSE((*repository)->SupportsLocks());
  EXPECT_FALSE((*repository)->SupportsExport());
  EXPECT_EQ((*repository)->ListEntries("/").status().code(), absl::StatusCode::kUnimplemented);
  absl::StatusOr<PluginWatch> watch = (*repository)->AddWatch("/k", [](const DataChangedEvent&) {});
  ASSERT_FALSE(watch.ok());
  EXPECT_EQ(watch.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(watch.status().message(),
              AllOf(HasSubstr("libregistry_old.so"), HasSubstr("ABI 1.0"), HasSubstr("watches")));
  EXPECT_EQ((*repository)->Watch("/k", [](const DataChangedEvent&) {}).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ((*repository)->GetLock("l").status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace registry::plugin
