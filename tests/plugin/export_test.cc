// SPDX-License-Identifier: Apache-2.0
// tests/plugin/export_test.cc
//
// The ABI 1.8 entries (list_entries, store_key_prefix, check_batch) end to end through a real
// dlopen of the in-memory test plugin: through the C++ wrapper (PluginRepository::ListEntries,
// StoreKeyPrefix, CheckBatch) and through the raw C table (arguments, the index of a bad entry,
// nothing visited on error, exceptions stopped at the boundary).
#include <dlfcn.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "tests/plugin/memory_plugin_test.h"

namespace registry::plugin {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ExportTest = MemoryPluginTest;
using Entry = Repository::StoredEntry;

TEST_F(ExportTest, ListEntriesGivesTheSubtreeInKeyOrderWithRawValuesFlagsAndEphemeralKeys) {
  const std::string binary("\0\xff\xfe\x01z", 5);
  ASSERT_TRUE(repository_->Persist("/a/b", binary).ok());
  ASSERT_TRUE(repository_->Persist("/a", "").ok());
  ASSERT_TRUE(repository_->Persist("/a/flagged", "f").ok());
  ASSERT_TRUE(repository_->PersistEphemeral("/a/live", "instance").ok());
  ASSERT_TRUE(repository_->Persist("/ab", "a sibling sharing the name").ok());
  absl::StatusOr<std::vector<Entry>> entries = repository_->ListEntries("/a");
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_THAT(*entries, ElementsAre(Entry{"/a", "", 0, false}, Entry{"/a/b", binary, 0, false},
                                    Entry{"/a/flagged", "f", 7, false},
                                    Entry{"/a/live", "instance", 0, true}));
  absl::StatusOr<std::vector<Entry>> all = repository_->ListEntries("/");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 5u);
  EXPECT_THAT(*repository_->ListEntries("/none"), IsEmpty());
}

TEST_F(ExportTest, AKeyPersistedAgainIsNoLongerEphemeral) {
  ASSERT_TRUE(repository_->PersistEphemeral("/k", "1").ok());
  EXPECT_THAT(*repository_->ListEntries("/k"), ElementsAre(Field(&Entry::ephemeral, true)));
  ASSERT_TRUE(repository_->Persist("/k", "2").ok());
  EXPECT_THAT(*repository_->ListEntries("/k"), ElementsAre(Entry{"/k", "2", 0, false}));
}

TEST_F(ExportTest, AMalformedKeyIsAnInvalidArgumentNamingIt) {
  absl::StatusOr<std::vector<Entry>> entries = repository_->ListEntries("no-slash");
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(entries.status().message(), HasSubstr("no-slash"));
}

TEST_F(ExportTest, StoreKeyPrefixIsThePlugins) {
  EXPECT_EQ(*repository_->StoreKeyPrefix(), "memory/");
}

TEST_F(ExportTest, CheckBatchNamesTheFirstBadEntryByIndexAndWritesNothing) {
  size_t bad = 99;
  EXPECT_TRUE(repository_->CheckBatch({{"/a", "1"}, {"/b", "2"}}, &bad).ok());
  EXPECT_EQ(bad, 2u);
  absl::Status status =
      repository_->CheckBatch({{"/a", "1"}, {"/b//c", "2"}, {"no-slash", "3"}}, &bad);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("/b//c"));
  EXPECT_EQ(bad, 1u);
  EXPECT_FALSE(*repository_->IsExisted("/a")) << "a check writes nothing";
  EXPECT_TRUE(repository_->CheckBatch({}, &bad).ok());
  EXPECT_EQ(bad, 0u);
}

// The raw table, as a C host sees it.
class ExportCTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(REGISTRY_TEST_PLUGIN_DIR "/libregistry_memory.so", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    auto init =
        reinterpret_cast<RegistryPluginInitFunc>(dlsym(handle_, REGISTRY_PLUGIN_INIT_SYMBOL));
    ASSERT_NE(init, nullptr);
    api_.struct_size = sizeof(api_);
    ASSERT_EQ(init(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, &api_, &error_), REGISTRY_OK);
    ASSERT_EQ(api_.create_from_props(nullptr, nullptr, 0, &repository_, &error_), REGISTRY_OK);
  }
  void TearDown() override {
    if (repository_ != nullptr) api_.destroy(repository_);
    api_.release_error(&error_);
    if (handle_ != nullptr) dlclose(handle_);
  }

  // The message of the error last reported, released.
  std::string TakeMessage() {
    std::string message = error_.message == nullptr ? "" : error_.message;
    api_.release_error(&error_);
    return message;
  }

  static void Count(const RegistryEntry* entry, void* user_data) {
    auto* seen = static_cast<std::vector<std::string>*>(user_data);
    seen->push_back(std::string(entry->key) + "=" + std::string(entry->value, entry->value_len) +
                    (entry->ephemeral ? " (ephemeral)" : "") +
                    // The value is NUL-terminated past value_len.
                    (entry->value[entry->value_len] == '\0' ? "" : " (no NUL)"));
  }

  void* handle_ = nullptr;
  RegistryPluginApi api_{};
  RegistryError error_{};
  RegistryRepository* repository_ = nullptr;
};

TEST_F(ExportCTableTest, ListEntriesVisitsEveryKeyOnTheCallingThreadAndRefusesNullArguments) {
  ASSERT_EQ(api_.persist(repository_, "/x/1", "one", 3, &error_), REGISTRY_OK);
  ASSERT_EQ(api_.persist_ephemeral(repository_, "/x/2", "two", 3, &error_), REGISTRY_OK);
  std::vector<std::string> seen;
  ASSERT_EQ(api_.list_entries(repository_, "/x", &Count, &seen, &error_), REGISTRY_OK);
  EXPECT_THAT(seen, ElementsAre("/x/1=one", "/x/2=two (ephemeral)"));

  EXPECT_EQ(api_.list_entries(repository_, "/x", nullptr, nullptr, &error_),
            REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(), HasSubstr("'visit'"));
  EXPECT_EQ(api_.list_entries(repository_, nullptr, &Count, &seen, &error_),
            REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(), HasSubstr("'key'"));
  seen.clear();
  EXPECT_EQ(api_.list_entries(repository_, "/x//y", &Count, &seen, &error_),
            REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(), HasSubstr("/x//y"));
  EXPECT_THAT(seen, IsEmpty()) << "nothing is visited on error";
  // An exception in the plugin is stopped at the boundary.
  EXPECT_EQ(api_.list_entries(repository_, "/x/throw", &Count, &seen, &error_), REGISTRY_INTERNAL);
  EXPECT_THAT(TakeMessage(), HasSubstr("uncaught exception"));
}

TEST_F(ExportCTableTest, StoreKeyPrefixIsAReleasedValue) {
  char* prefix = nullptr;
  size_t len = 0;
  ASSERT_EQ(api_.store_key_prefix(repository_, &prefix, &len, &error_), REGISTRY_OK);
  EXPECT_EQ(std::string(prefix, len), "memory/");
  EXPECT_EQ(prefix[len], '\0');
  api_.release_value(prefix);
  EXPECT_EQ(api_.store_key_prefix(repository_, nullptr, &len, &error_), REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(), HasSubstr("'prefix'"));
}

TEST_F(ExportCTableTest, CheckBatchGivesTheIndexOfTheEntryAtFaultOrTheCount) {
  const char* keys[] = {"/a", "/b", nullptr};
  const char* values[] = {"1", "2", "3"};
  const size_t lens[] = {1, 1, 1};
  size_t bad = 99;
  ASSERT_EQ(api_.check_batch(repository_, keys, values, lens, 2, &bad, &error_), REGISTRY_OK);
  EXPECT_EQ(bad, 2u);
  // A NULL key is entry 2's fault.
  EXPECT_EQ(api_.check_batch(repository_, keys, values, lens, 3, &bad, &error_),
            REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(), HasSubstr("check_batch: keys[2] is NULL"));
  EXPECT_EQ(bad, 2u);
  // A key the repository refuses.
  const char* bad_keys[] = {"/a", "/b//c"};
  EXPECT_EQ(api_.check_batch(repository_, bad_keys, values, lens, 2, &bad, &error_),
            REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(), HasSubstr("/b//c"));
  EXPECT_EQ(bad, 1u);
  // A NULL array is no entry's fault: the index is the count.
  EXPECT_EQ(api_.check_batch(repository_, nullptr, values, lens, 2, &bad, &error_),
            REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(TakeMessage(), HasSubstr("'keys'"));
  EXPECT_EQ(bad, 2u);
  // count 0 with NULL arrays, and a NULL bad_index.
  EXPECT_EQ(api_.check_batch(repository_, nullptr, nullptr, nullptr, 0, nullptr, &error_),
            REGISTRY_OK);
  bool exists = true;
  ASSERT_EQ(api_.exists(repository_, "/a", &exists, &error_), REGISTRY_OK);
  EXPECT_FALSE(exists) << "a check writes nothing";
}

}  // namespace
}  // namespace registry::plugin
