// SPDX-License-Identifier: Apache-2.0
// tests/repository/consul_repository_options_test.cc
#include <filesystem>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "conf/registry_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"

namespace registry {
namespace {

using ::testing::HasSubstr;

ConsulRepositoryOptions ValidOptions() {
  ConsulRepositoryOptions options;
  options.namespace_name = "governance_ds";
  return options;
}

void ExpectRejected(const ConsulRepositoryOptions& options, absl::string_view field) {
  absl::Status status = ValidateConsulRepositoryOptions(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(field));
  EXPECT_EQ(NewConsulRepository(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConsulRepositoryOptionsTest, DefaultsWithANamespaceAreValid) {
  EXPECT_TRUE(ValidateConsulRepositoryOptions(ValidOptions()).ok());
}

TEST(ConsulRepositoryOptionsTest, RejectsAnEmptyNamespace) {
  ConsulRepositoryOptions options = ValidOptions();
  options.namespace_name = "";
  ExpectRejected(options, "namespace_name");
}

TEST(ConsulRepositoryOptionsTest, RejectsANamespaceWithASlashAtAnEnd) {
  ConsulRepositoryOptions options = ValidOptions();
  options.namespace_name = "ns/";
  ExpectRejected(options, "namespace_name");
}

TEST(ConsulRepositoryOptionsTest, RejectsANonPositiveSessionTtl) {
  ConsulRepositoryOptions options = ValidOptions();
  options.session_ttl = absl::ZeroDuration();
  ExpectRejected(options, "session_ttl");
}

TEST(ConsulRepositoryOptionsTest, RejectsASessionTtlOverADay) {
  ConsulRepositoryOptions options = ValidOptions();
  options.session_ttl = absl::Hours(24) + absl::Seconds(1);
  ExpectRejected(options, "session_ttl");
}

TEST(ConsulRepositoryOptionsTest, AcceptsAZeroLockDelayButNotANegativeOrHugeOne) {
  ConsulRepositoryOptions options = ValidOptions();
  options.session_lock_delay = absl::ZeroDuration();
  EXPECT_TRUE(ValidateConsulRepositoryOptions(options).ok());
  options.session_lock_delay = absl::Seconds(-1);
  ExpectRejected(options, "session_lock_delay");
  options.session_lock_delay = absl::Seconds(61);
  ExpectRejected(options, "session_lock_delay");
}

TEST(ConsulRepositoryOptionsTest, RejectsANonPositiveOrHugeBlockQueryWait) {
  ConsulRepositoryOptions options = ValidOptions();
  options.block_query_wait = absl::ZeroDuration();
  ExpectRejected(options, "block_query_wait");
  options.block_query_wait = absl::Minutes(11);
  ExpectRejected(options, "block_query_wait");
}

TEST(ConsulRepositoryOptionsTest, RejectsALockRetryLongerThanTheTtl) {
  ConsulRepositoryOptions options = ValidOptions();
  options.lock_retry = absl::ZeroDuration();
  ExpectRejected(options, "lock_retry");
  options.lock_retry = options.session_ttl + absl::Seconds(1);
  ExpectRejected(options, "lock_retry");
}

TEST(ConsulRepositoryOptionsTest, RejectsALockRetryOverAMinuteEvenWithALongerTtl) {
  ConsulRepositoryOptions options = ValidOptions();
  options.session_ttl = absl::Minutes(5);
  options.lock_retry = absl::Seconds(61);
  ExpectRejected(options, "ConsulRepositoryOptions.lock_retry: 1m1s");
}

TEST(ConsulRepositoryOptionsTest, DefaultsAreThoseOfARegistryYamlThatOmitsEveryProp) {
  const conf::RegistryConfig yaml;
  const ConsulRepositoryOptions options;
  EXPECT_EQ(options.session_ttl, yaml.session_ttl);
  EXPECT_EQ(options.session_lock_delay, yaml.session_lock_delay);
  EXPECT_EQ(options.block_query_wait, yaml.block_query_wait);
  EXPECT_EQ(options.lock_retry, yaml.lock_retry);
  EXPECT_EQ(options.client.connect_timeout, yaml.connect_timeout);
  EXPECT_EQ(options.client.request_timeout, yaml.request_timeout);
  EXPECT_EQ(options.txn_max_operations, yaml.txn_max_operations);
  EXPECT_EQ(options.watch_max_connections, yaml.watch_max_connections);
}

TEST(ConsulRepositoryOptionsTest, RejectsWatchConnectionsOutsideOneTo180) {
  ConsulRepositoryOptions options;
  options.namespace_name = "ns";
  options.watch_max_connections = 181;
  absl::Status status = ValidateConsulRepositoryOptions(options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("watch_max_connections: 181"), absl::string_view::npos) << status;
}

TEST(ConsulRepositoryOptionsTest, RejectsBadClientOptions) {
  ConsulRepositoryOptions options = ValidOptions();
  options.client.servers = "";
  EXPECT_EQ(ValidateConsulRepositoryOptions(options).code(), absl::StatusCode::kInvalidArgument);
}

// The threads of this process (each test runs in a process of its own under ctest).
size_t ProcessThreads() {
  size_t threads = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++threads;
  }
  return threads;
}

TEST(ConsulRepositoryOptionsTest, TheRootContactsNoServerStartsNoThreadAndHandsOverTheLockParts) {
  ConsulRepositoryOptions options = ValidOptions();
  options.client.servers = "127.0.0.1:1";  // nothing listens there; nothing is sent yet
  const size_t threads_before = ProcessThreads();
  absl::StatusOr<ConsulInstance> instance = NewConsulInstance(options);
  ASSERT_TRUE(instance.ok()) << instance.status();
  EXPECT_EQ(ProcessThreads(), threads_before);
  const lock::LockManagerParts& parts = instance->locks;
  EXPECT_EQ(parts.session.CurrentSessionId(), "");
  EXPECT_EQ(instance->repository->CurrentSessionId(), "");
  EXPECT_EQ(parts.key_space.namespace_name(), options.namespace_name);
  EXPECT_EQ(parts.session_ttl, options.session_ttl);
  EXPECT_EQ(parts.block_query_wait, options.block_query_wait);
  EXPECT_EQ(parts.lock_retry, options.lock_retry);
  // The executor starts its worker with its first task, and runs it off the caller's thread.
  absl::Notification ran;
  std::thread::id ran_on;
  ASSERT_TRUE(parts.tasks.Post([&] {
    ran_on = std::this_thread::get_id();
    ran.Notify();
  }));
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_NE(ran_on, std::this_thread::get_id());
  // Closing the repository closes the parts: the executor takes no more tasks.
  ASSERT_TRUE(instance->repository->Close().ok());
  EXPECT_FALSE(parts.tasks.Post([] {}));
}

TEST(ConsulRepositoryOptionsTest, InvalidKeysFailWithoutContactingAServer) {
  ConsulRepositoryOptions options = ValidOptions();
  options.client.servers = "127.0.0.1:1";
  absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
  ASSERT_TRUE(repository.ok()) << repository.status();
  absl::Status status = (*repository)->Persist("a/b", "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'a/b'"));
  EXPECT_EQ((*repository)->Get("/").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConsulRepositoryOptionsTest, CallsAfterCloseFailWithFailedPrecondition) {
  ConsulRepositoryOptions options = ValidOptions();
  options.client.servers = "127.0.0.1:1";
  absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
  ASSERT_TRUE(repository.ok()) << repository.status();
  EXPECT_TRUE((*repository)->Close().ok());  // no session yet: nothing to destroy
  EXPECT_TRUE((*repository)->Close().ok());
  EXPECT_EQ((*repository)->Get("/a").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*repository)->PersistEphemeral("/a", "v").code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace registry
