// SPDX-License-Identifier: Apache-2.0
// tests/plugin/plugin_client_test.cc
//
// The C++ wrapper over the C ABI and the plugin-side adapter, end to end through a real dlopen
// of the in-memory test plugin (memory_plugin.cc): values, absence, children, errors and their
// codes, exceptions stopped at the boundary, listeners, close, and library lifetime.
#include "host/plugin_client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "tests/plugin/memory_plugin_test.h"

namespace registry::plugin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using PluginClientTest = MemoryPluginTest;

TEST_F(PluginClientTest, AbsentKeyIsAnEmptyOptionalNotAnError) {
  absl::StatusOr<std::optional<std::string>> value = repository_->Get("/absent");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_FALSE(value->has_value());
  EXPECT_FALSE(*repository_->IsExisted("/absent"));
}

TEST_F(PluginClientTest, ValuesCrossTheBoundaryByteForByteIncludingNulAndEmpty) {
  const std::string binary("a\0b\xff", 4);
  ASSERT_TRUE(repository_->Persist("/bin", binary).ok());
  ASSERT_TRUE(repository_->Persist("/empty", "").ok());
  EXPECT_EQ(**repository_->Get("/bin"), binary);
  absl::StatusOr<std::optional<std::string>> empty = repository_->Get("/empty");
  ASSERT_TRUE(empty.ok() && empty->has_value());
  EXPECT_EQ(**empty, "");
  EXPECT_TRUE(*repository_->IsExisted("/empty"));
}

TEST_F(PluginClientTest, ChildrenAreDirectNamesSortedAndEmptyForALeaf) {
  ASSERT_TRUE(repository_->Persist("/a/c/d", "1").ok());
  ASSERT_TRUE(repository_->Persist("/a/b", "2").ok());
  EXPECT_THAT(*repository_->GetChildrenKeys("/a"), ElementsAre("b", "c"));
  EXPECT_THAT(*repository_->GetChildrenKeys("/a/b"), IsEmpty());
}

TEST_F(PluginClientTest, UpdateOfAnAbsentKeyKeepsTheNotFoundCode) {
  absl::Status status = repository_->Update("/missing", "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("/missing"));
  ASSERT_TRUE(repository_->Persist("/present", "1").ok());
  ASSERT_TRUE(repository_->Update("/present", "2").ok());
  EXPECT_EQ(**repository_->Get("/present"), "2");
}

TEST_F(PluginClientTest, DeleteRemovesTheSubtree) {
  ASSERT_TRUE(repository_->Persist("/t/x", "1").ok());
  ASSERT_TRUE(repository_->Persist("/t/y/z", "1").ok());
  ASSERT_TRUE(repository_->Delete("/t").ok());
  EXPECT_THAT(*repository_->GetChildrenKeys("/t"), IsEmpty());
  EXPECT_TRUE(repository_->Delete("/never").ok());
}

TEST_F(PluginClientTest, ExclusiveEphemeralIsCreatedOnlyOnce) {
  EXPECT_TRUE(*repository_->PersistExclusiveEphemeral("/leader", "me"));
  EXPECT_FALSE(*repository_->PersistExclusiveEphemeral("/leader", "you"));
  EXPECT_EQ(**repository_->Get("/leader"), "me");
  ASSERT_TRUE(repository_->PersistEphemeral("/leader", "you").ok());
  EXPECT_EQ(**repository_->Get("/leader"), "you");
}

TEST_F(PluginClientTest, InvalidKeyKeepsTheInvalidArgumentCodeAndNamesTheKey) {
  absl::Status status = repository_->Persist("no-slash", "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'no-slash'"));
}

TEST_F(PluginClientTest, ExceptionInsideThePluginBecomesInternalWithItsMessage) {
  absl::StatusOr<std::optional<std::string>> value = repository_->Get("/x/throw");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(value.status().message(), HasSubstr("thrown for /x/throw"));
  // The repository is still usable afterwards.
  EXPECT_TRUE(repository_->Persist("/after", "1").ok());
}

TEST_F(PluginClientTest, ExceptionInsideAFactoryBecomesInternal) {
  absl::StatusOr<std::unique_ptr<PluginRepository>> repository =
      library_->CreateFromProps({{"throw", "factory exploded"}});
  ASSERT_FALSE(repository.ok());
  EXPECT_EQ(repository.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(repository.status().message(), HasSubstr("factory exploded"));
}

TEST_F(PluginClientTest, CreationErrorKeepsTheCodeAndTheMessage) {
  absl::StatusOr<std::unique_ptr<PluginRepository>> from_props =
      library_->CreateFromProps({{"fail", "bad value"}});
  EXPECT_EQ(from_props.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(from_props.status().message(), HasSubstr("fail: 'bad value'"));

  absl::StatusOr<std::unique_ptr<PluginRepository>> from_yaml = library_->CreateFromYaml("");
  EXPECT_EQ(from_yaml.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(from_yaml.status().message(), HasSubstr("type"));

  absl::StatusOr<std::unique_ptr<PluginRepository>> overridden =
      library_->CreateFromYaml("repository:\n  type: Memory\n", {{"fail", "from an override"}});
  EXPECT_THAT(overridden.status().message(), HasSubstr("from an override"));
}

TEST_F(PluginClientTest, NullArgumentsAtTheCBoundaryAreInvalidArgumentNamingTheParameter) {
  const RegistryPluginApi& api = library_->api();
  RegistryError error{};
  EXPECT_EQ(api.persist(nullptr, "/k", "v", 1, &error), REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(error.message, HasSubstr("'repository'"));
  api.release_error(&error);
  EXPECT_EQ(error.message, nullptr);
  RegistryRepository* handle = nullptr;
  EXPECT_EQ(api.create_from_props(nullptr, nullptr, 2, &handle, &error), REGISTRY_INVALID_ARGUMENT);
  EXPECT_EQ(error.code, REGISTRY_INVALID_ARGUMENT);
  EXPECT_THAT(error.message, HasSubstr("count is 2"));
  api.release_error(&error);
  EXPECT_EQ(handle, nullptr);
}

TEST_F(PluginClientTest, ConnectionListenerIsCalledFromThePluginAndCanBeRemoved) {
  absl::Notification called;
  ConnectionState seen = ConnectionState::kLost;
  const int id = repository_->AddConnectionListener([&](ConnectionState state) {
    seen = state;
    called.Notify();
  });
  ASSERT_GE(id, 0);
  ASSERT_TRUE(called.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(seen, ConnectionState::kConnected);
  repository_->RemoveConnectionListener(id);
}

TEST_F(PluginClientTest, ClosedRepositoryFailsLaterCallsWithFailedPrecondition) {
  ASSERT_TRUE(repository_->Close().ok());
  EXPECT_TRUE(repository_->Close().ok());
  EXPECT_EQ(repository_->Persist("/k", "v").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PluginClientTest, RepositoryKeepsItsLibraryLoadedAfterTheHostDropsIt) {
  library_.reset();
  ASSERT_TRUE(repository_->Persist("/still", "here").ok());
  EXPECT_EQ(**repository_->Get("/still"), "here");
  EXPECT_EQ(repository_->library().repository_type(), "Memory");
}

}  // namespace
}  // namespace registry::plugin
