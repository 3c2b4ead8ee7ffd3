// SPDX-License-Identifier: Apache-2.0
// Live session create/renew/destroy/info/list and TTL expiry through registry::consul::Client.
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "integration/consul_client/live_fixture.h"

namespace registry::consul::live {
namespace {

using SessionLiveTest = LiveClientTest;
// Tests that need the dev server's fault injection, request counts or a second server.
class SessionLiveFaultsTest : public registry::testing::DevServerOnly<LiveClientTest> {};

constexpr absl::string_view kUnknownSession = "6f0a2b3c-0000-4000-8000-000000000000";

bool Lists(const SessionListResult& list, const std::string& id) {
  return std::any_of(list.sessions.begin(), list.sessions.end(),
                     [&id](const SessionInfo& info) { return info.id == id; });
}

TEST_F(SessionLiveTest, CreatedSessionReportsItsNameBehaviorTtlAndLockDelayWithoutChecks) {
  SessionCreateOptions options;
  options.name = "instance-7";
  options.behavior = SessionBehavior::kDelete;
  options.ttl = absl::Seconds(30);
  options.lock_delay = absl::Milliseconds(1500);
  const std::string id = NewSession(options);
  ASSERT_FALSE(id.empty());
  ASSERT_OK_AND_ASSIGN(SessionInfoResult info, client().GetSessionInfo(id));
  ASSERT_TRUE(info.session.has_value());
  EXPECT_EQ(info.session->id, id);
  EXPECT_EQ(info.session->name, "instance-7");
  EXPECT_EQ(info.session->behavior, SessionBehavior::kDelete);
  EXPECT_EQ(info.session->ttl, absl::Seconds(30));
  EXPECT_EQ(info.session->lock_delay, absl::Milliseconds(1500));
  EXPECT_FALSE(info.session->node.empty());
  EXPECT_TRUE(info.session->node_checks.empty());
  EXPECT_TRUE(info.session->service_checks.empty());
  EXPECT_GE(info.session->create_index, 1u);
  EXPECT_GE(info.meta.index, info.session->create_index);
}

TEST_F(SessionLiveTest, SessionWithoutTtlReportsZeroTtlAndReleaseBehavior) {
  const std::string id = NewSession(PlainSession("plain"));
  ASSERT_OK_AND_ASSIGN(SessionInfoResult info, client().GetSessionInfo(id));
  ASSERT_TRUE(info.session.has_value());
  EXPECT_EQ(info.session->ttl, absl::ZeroDuration());
  EXPECT_EQ(info.session->behavior, SessionBehavior::kRelease);
  EXPECT_EQ(info.session->lock_delay, absl::ZeroDuration());
}

TEST_F(SessionLiveTest, TtlBelowTheServerMinimumIsRejectedNamingTheTtl) {
  SessionCreateOptions options = PlainSession("short");
  options.ttl = absl::Milliseconds(500);
  absl::StatusOr<std::string> id = client().CreateSession(options);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("TTL"), absl::string_view::npos) << id.status();
}

TEST_F(SessionLiveTest, RenewOfALiveSessionReturnsIt) {
  SessionCreateOptions options = PlainSession("renewed");
  options.ttl = absl::Seconds(10);
  const std::string id = NewSession(options);
  ASSERT_OK_AND_ASSIGN(std::optional<SessionInfo> renewed, client().RenewSession(id));
  ASSERT_TRUE(renewed.has_value());
  EXPECT_EQ(renewed->id, id);
  EXPECT_EQ(renewed->ttl, absl::Seconds(10));
}

TEST_F(SessionLiveTest, RenewOfADestroyedSessionReportsItGone) {
  const std::string id = NewSession(PlainSession("doomed"));
  ASSERT_OK(client().DestroySession(id));
  ASSERT_OK_AND_ASSIGN(std::optional<SessionInfo> renewed, client().RenewSession(id));
  EXPECT_FALSE(renewed.has_value());
}

TEST_F(SessionLiveTest, DestroyOfAnUnknownSessionSucceeds) {
  ASSERT_OK(client().DestroySession(kUnknownSession));
}

TEST_F(SessionLiveTest, InfoOfAnUnknownSessionIsAbsentWithIndexMeta) {
  ASSERT_OK_AND_ASSIGN(SessionInfoResult info, client().GetSessionInfo(kUnknownSession));
  EXPECT_FALSE(info.session.has_value());
  EXPECT_GE(info.meta.index, 1u);
}

TEST_F(SessionLiveTest, DestroyedSessionDisappearsFromInfoAndList) {
  const std::string kept = NewSession(PlainSession("kept"));
  const std::string gone = NewSession(PlainSession("gone"));
  ASSERT_OK_AND_ASSIGN(SessionListResult before, client().ListSessions());
  EXPECT_TRUE(Lists(before, kept));
  EXPECT_TRUE(Lists(before, gone));
  ASSERT_OK(client().DestroySession(gone));
  ASSERT_OK_AND_ASSIGN(SessionListResult after, client().ListSessions());
  EXPECT_TRUE(Lists(after, kept));
  EXPECT_FALSE(Lists(after, gone));
  EXPECT_GT(after.meta.index, before.meta.index);
  ASSERT_OK_AND_ASSIGN(SessionInfoResult info, client().GetSessionInfo(gone));
  EXPECT_FALSE(info.session.has_value());
}

TEST_F(SessionLiveTest, DestroyingADeleteSessionDeletesItsKeysAtOnce) {
  SessionCreateOptions options = PlainSession("ephemeral");
  options.behavior = SessionBehavior::kDelete;
  const std::string id = NewSession(options);
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("nodes/me", "up", {.acquire = id}));
  ASSERT_TRUE(held);
  ASSERT_OK(client().DestroySession(id));
  EXPECT_FALSE(Lookup("nodes/me").has_value());
}

TEST_F(SessionLiveTest, TtlExpiryOfADeleteSessionDeletesTheKeysItHolds) {
  SessionCreateOptions options = PlainSession("ephemeral");
  options.behavior = SessionBehavior::kDelete;
  options.ttl = absl::Seconds(1);
  const absl::Time created = absl::Now();
  const std::string id = NewSession(options);
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("nodes/me", "up", {.acquire = id}));
  ASSERT_TRUE(held);
  ASSERT_OK(client().KvPut("nodes/other", "unheld").status());

  // Block on the key until it is gone (Consul expires at 2 x TTL).
  const absl::Time deadline = created + absl::Seconds(2) + kPatience;
  uint64_t index = 0;
  bool present = true;
  while (present && absl::Now() < deadline) {
    ASSERT_OK_AND_ASSIGN(
        KvGetResult get,
        client().KvGet("nodes/me", {.index = index, .wait = deadline - absl::Now()}));
    present = get.entry.has_value();
    index = get.meta.index;
  }
  const absl::Duration lived = absl::Now() - created;
  ASSERT_FALSE(present) << "key still held after " << lived;
  EXPECT_GE(lived, absl::Seconds(1));  // not before the TTL itself
  EXPECT_LT(lived, absl::Seconds(4));  // 2 x TTL plus a margin for a loaded machine
  EXPECT_TRUE(Lookup("nodes/other").has_value());
  ASSERT_OK_AND_ASSIGN(SessionInfoResult info, client().GetSessionInfo(id));
  EXPECT_FALSE(info.session.has_value());
}

TEST_F(SessionLiveTest, RenewedSessionOutlivesTwiceItsTtl) {
  SessionCreateOptions options = PlainSession("kept alive");
  options.behavior = SessionBehavior::kDelete;
  options.ttl = absl::Seconds(1);
  const absl::Time created = absl::Now();
  const std::string id = NewSession(options);
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("nodes/me", "up", {.acquire = id}));
  ASSERT_TRUE(held);
  // Renewing every TTL/2 keeps it alive well past the unrenewed expiry at 2 x TTL.
  while (absl::Now() - created < absl::Milliseconds(2500)) {
    ASSERT_OK_AND_ASSIGN(std::optional<SessionInfo> renewed, client().RenewSession(id));
    ASSERT_TRUE(renewed.has_value()) << "expired after " << absl::Now() - created;
    absl::SleepFor(absl::Milliseconds(500));
  }
  EXPECT_TRUE(Lookup("nodes/me").has_value());
}

TEST_F(SessionLiveFaultsTest, ServerSideExpiryOfAReleaseSessionUnlocksItsKeysAndKeepsValues) {
  const std::string id = NewSession(PlainSession("lost"));
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("locks/x", "payload", {.acquire = id}));
  ASSERT_TRUE(held);
  ASSERT_OK(server().ExpireSession(id));
  std::optional<DirEntry> entry = Lookup("locks/x");
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->session, "");
  EXPECT_EQ(entry->value, "payload");
  EXPECT_EQ(entry->lock_index, 1u);
  ASSERT_OK_AND_ASSIGN(std::optional<SessionInfo> renewed, client().RenewSession(id));
  EXPECT_FALSE(renewed.has_value());
}

}  // namespace
}  // namespace registry::consul::live
