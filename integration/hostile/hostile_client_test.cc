// SPDX-License-Identifier: Apache-2.0
// integration/hostile/hostile_client_test.cc
//
// The client, the repository and the locks against servers that flood, hang or are gone
// (integration/hostile/hostile_server.h): memory stays bounded by the most one answer may hold,
// and every call ends by its documented bound (docs/operations.md, "Bounds").
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "consul/client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/hostile/hostile_server.h"
#include "integration/hostile/hostile_testing.h"
#include "lock/lock_manager.h"

namespace registry::integration {
namespace {

using Behaviour = HostileServer::Behaviour;
using ::testing::HasSubstr;

// The limit of these tests' clients, far below what the servers send.
constexpr size_t kLimit = size_t{4} << 20;
// What may be on its way to a client beyond what it accepted: one piece of the server's, and
// the loopback socket buffers of both ends.
constexpr uint64_t kInFlight = uint64_t{24} << 20;
// How late a call may return after its bound on a loaded machine (sanitizers, ctest -j).
constexpr absl::Duration kSlack = absl::Seconds(2);

consul::ClientOptions ClientFor(const std::string& address) {
  consul::ClientOptions options;
  options.servers = address;
  options.request_timeout = absl::Seconds(1);
  options.max_response_bytes = kLimit;
  return options;
}

std::unique_ptr<consul::Client> NewClient(const std::string& address) {
  absl::StatusOr<std::unique_ptr<consul::Client>> client =
      consul::Client::Create(ClientFor(address));
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

absl::StatusOr<ConsulInstance> NewInstance(const std::string& address) {
  ConsulRepositoryOptions options;
  options.client = ClientFor(address);
  options.namespace_name = "hostile";
  options.session_ttl = absl::Seconds(10);
  options.block_query_wait = absl::Seconds(5);
  return NewConsulInstance(options);
}

std::unique_ptr<ConsulRepository> NewRepository(const std::string& address) {
  absl::StatusOr<ConsulInstance> instance = NewInstance(address);
  EXPECT_TRUE(instance.ok()) << instance.status();
  return instance.ok() ? std::move(instance->repository) : nullptr;
}

TEST(HostileServerTest, AListingLargerThanTheLimitFailsNamingItAndIsNotReadToTheEnd) {
  auto server = StartServer(Behaviour::kHugeBody, uint64_t{256} << 20);
  ASSERT_NE(server, nullptr);
  auto client = NewClient(server->address());
  ASSERT_NE(client, nullptr);
  absl::Status listed = client->KvList("big").status();
  EXPECT_TRUE(absl::IsResourceExhausted(listed)) << listed;
  EXPECT_THAT(listed.message(), HasSubstr("larger than 4194304 bytes"));
  EXPECT_THAT(listed.message(), HasSubstr("/v1/kv/big"));
  EXPECT_LT(server->bytes_sent(), kLimit + kInFlight);
}

TEST(HostileServerTest, ABlockingReadOfABodyWithoutEndEndsAtTheLimit) {
  auto server = StartServer(Behaviour::kEndlessChunks);
  ASSERT_NE(server, nullptr);
  auto client = NewClient(server->address());
  ASSERT_NE(client, nullptr);
  consul::QueryOptions blocking;
  blocking.index = 5;
  blocking.wait = absl::Seconds(60);
  absl::Status read = client->KvGet("k", blocking).status();
  EXPECT_TRUE(absl::IsResourceExhausted(read)) << read;
  EXPECT_LT(server->bytes_sent(), kLimit + kInFlight);
}

TEST(HostileServerTest, TheRepositoryReportsAFloodNamingTheKey) {
  auto server = StartServer(Behaviour::kEndlessChunks);
  ASSERT_NE(server, nullptr);
  auto repository = NewRepository(server->address());
  ASSERT_NE(repository, nullptr);
  absl::StatusOr<std::optional<std::string>> value = repository->Get("/a/b");
  EXPECT_TRUE(absl::IsResourceExhausted(value.status())) << value.status();
  EXPECT_THAT(value.status().message(), HasSubstr("hostile/a/b"));
  EXPECT_LT(server->bytes_sent(), kLimit + kInFlight);
}

// TryLock(timeout) against a server that never answers and one that is gone, when the instance
// has no session yet: creating the session is part of the call and ends with it.
enum class Peer { kSilent, kClosedPort };

class HostileLockTest : public ::testing::TestWithParam<Peer> {
 protected:
  void SetUp() override {
    if (GetParam() == Peer::kSilent) {
      server_ = StartServer(Behaviour::kSilent);
      ASSERT_NE(server_, nullptr);
    }
    absl::StatusOr<ConsulInstance> instance =
        NewInstance(server_ != nullptr ? server_->address() : ClosedLoopbackAddress());
    ASSERT_TRUE(instance.ok()) << instance.status();
    repository_ = std::move(instance->repository);
    absl::StatusOr<std::unique_ptr<lock::LockManager>> manager =
        lock::LockManager::Create(instance->locks, {});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
  }
  void TearDown() override {
    manager_.reset();
    if (repository_ != nullptr) {
      EXPECT_TRUE(repository_->Close().ok());
    }
  }

  // lock.TryLock(timeout): its result, and how long it took.
  std::pair<absl::StatusOr<bool>, absl::Duration> TimedTryLock(absl::Duration timeout) {
    absl::StatusOr<std::shared_ptr<lock::DistributedLock>> lock = manager_->GetLock("l");
    EXPECT_TRUE(lock.ok()) << lock.status();
    if (!lock.ok()) return {lock.status(), absl::ZeroDuration()};
    const absl::Time start = absl::Now();
    absl::StatusOr<bool> acquired = (*lock)->TryLock(timeout);
    return {acquired, absl::Now() - start};
  }

  std::unique_ptr<HostileServer> server_;  // null: the closed port
  std::unique_ptr<ConsulRepository> repository_;
  std::unique_ptr<lock::LockManager> manager_;
};

TEST_P(HostileLockTest, TryLockReturnsByItsDeadline) {
  constexpr absl::Duration kTimeout = absl::Milliseconds(300);
  auto [acquired, took] = TimedTryLock(kTimeout);
  EXPECT_FALSE(acquired.ok() && *acquired);
  if (!acquired.ok()) {
    EXPECT_TRUE(absl::IsUnavailable(acquired.status())) << acquired.status();
  }
  EXPECT_GE(took, kTimeout);
  EXPECT_LT(took, kTimeout + kSlack) << "TryLock(" << kTimeout << ") took " << took;
}

TEST_P(HostileLockTest, ASingleAttemptReturnsWithinTheRequestTimeout) {
  auto [acquired, took] = TimedTryLock(absl::ZeroDuration());
  EXPECT_FALSE(acquired.ok() && *acquired);
  EXPECT_LT(took, absl::Seconds(1) + kSlack) << "TryLock(0) took " << took;
}

INSTANTIATE_TEST_SUITE_P(SilentOrGone, HostileLockTest,
                         ::testing::Values(Peer::kSilent, Peer::kClosedPort),
                         [](const ::testing::TestParamInfo<Peer>& info) {
                           return info.param == Peer::kSilent ? "Silent" : "ClosedPort";
                         });

}  // namespace
}  // namespace registry::integration
