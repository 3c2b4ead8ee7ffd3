// SPDX-License-Identifier: Apache-2.0
// integration/faults/session_node_test.cc
//
// A session belongs to a catalog node, and Consul invalidates every session of a node it
// deregisters. An instance that talks straight to the servers creates its session through one
// of them, so by default the session belongs to that server's node; when autopilot removes that
// server (here: killed for good in a 3-server cluster), the session ends although the instance
// and the other servers are healthy. The repository's sessions belong to a node of its own
// (repository/session_node.h), which no server's removal touches. Both are shown: the default,
// and the agent's node (sessionNode ""), whose session dies with the server.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/consul_cluster.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/eventually.h"
#include "integration/testing/server_test.h"
#include "integration/testing/state_recorder.h"
#include "nlohmann/json.hpp"
#include "repository/instance_session.h"
#include "repository/session_metrics.h"

namespace registry::faults {
namespace {

using integration::ConsulCluster;
using integration::HttpCall;
using integration::HttpReply;
using registry::testing::Eventually;
using registry::testing::StateRecorder;
using registry::testing::StatesToString;

// GET `path` from server `address`, tried until it answers 200 (an election may be under way),
// at most 30 s; nullopt if it never did.
std::optional<nlohmann::json> GetJson(const std::string& address, const std::string& path) {
  std::optional<nlohmann::json> answer;
  Eventually(
      [&] {
        absl::StatusOr<HttpReply> reply = HttpCall("GET", absl::StrCat("http://", address, path));
        if (!reply.ok() || reply->status != 200) return false;
        nlohmann::json body = nlohmann::json::parse(reply->body, nullptr, false);
        if (body.is_discarded()) return false;
        answer = std::move(body);
        return true;
      },
      absl::Seconds(30), absl::Milliseconds(200));
  return answer;
}

// Whether the catalog, as server `address` reads it consistently, still holds node `node`.
bool CatalogHasNode(const std::string& address, const std::string& node) {
  const std::optional<nlohmann::json> nodes = GetJson(address, "/v1/catalog/nodes?consistent");
  if (!nodes.has_value()) return true;  // unknown: keep waiting
  for (const auto& entry : *nodes) {
    if (entry.value("Node", "") == node) return true;
  }
  return false;
}

// The node of session `id` as server `address` reads it consistently; "" when it has none.
std::string SessionNodeOf(const std::string& address, const std::string& id) {
  const std::optional<nlohmann::json> sessions =
      GetJson(address, absl::StrCat("/v1/session/info/", id, "?consistent"));
  EXPECT_TRUE(sessions.has_value()) << "no answer from " << address;
  return sessions.has_value() && sessions->is_array() && !sessions->empty()
             ? (*sessions)[0].value("Node", "")
             : "";
}

uint64_t SuccessfulRenewals() {
  return SessionMetrics().session_renewals.At({metrics::Index(RenewalOutcome::kOk)}).Value();
}

struct Outcome {
  std::string killed;       // the node of the server the session was created through
  std::string node_before;  // the session's node while every server ran
  std::string node_after;   // after autopilot removed that server ("" when the session is gone)
  bool kept = false;        // the instance renewed its session twice more after the removal
  bool lost_heard = false;  // the instance heard LOST after the removal
};

// Creates an instance session through a follower (not the leader: killing it costs no
// election, so nothing but the node's removal can end the session), kills that server for good
// and waits for Consul to deregister its node; then watches what the instance makes of it.
// `session_node`: ConsulRepositoryOptions::session_node, or its default when nullopt.
Outcome KillTheServerTheSessionWasCreatedThrough(std::optional<std::string> session_node) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> cluster =
      ConsulCluster::Start({.binary = integration::ConsulBinary(CONSUL_BIN), .servers = 3});
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return {};
  absl::StatusOr<int> leader = (*cluster)->AwaitLeader(absl::Seconds(30));
  EXPECT_TRUE(leader.ok()) << leader.status();
  if (!leader.ok()) return {};
  const int doomed = (*leader + 1) % 3;
  ConsulRepositoryOptions options;
  // The doomed server first: the session is created through it.
  options.client.servers =
      absl::StrCat((*cluster)->address(doomed), ",", (*cluster)->address((doomed + 1) % 3), ",",
                   (*cluster)->address((doomed + 2) % 3));
  options.namespace_name = "nodes";
  options.session_ttl = absl::Seconds(3);
  options.session_lock_delay = absl::Seconds(1);
  if (session_node.has_value()) options.session_node = *session_node;
  StateRecorder recorder;  // outlives the repository
  absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
  EXPECT_TRUE(repository.ok()) << repository.status();
  if (!repository.ok()) return {};
  (*repository)->AddConnectionListener(recorder.Listener());
  EXPECT_TRUE((*repository)->PersistEphemeral("/online/a", "a").ok());
  const std::string id = (*repository)->CurrentSessionId();
  const std::string survivor = (*cluster)->address(*leader);
  Outcome outcome;
  outcome.killed = absl::StrCat("server", doomed);
  outcome.node_before = SessionNodeOf(survivor, id);

  (*cluster)->Kill(doomed);
  if (!Eventually([&] { return !CatalogHasNode(survivor, outcome.killed); }, absl::Seconds(90),
                  absl::Milliseconds(250))) {
    ADD_FAILURE() << "autopilot did not remove " << outcome.killed << " within 90 s";
    (*cluster)->KeepFilesAndPrintLogs();
    return outcome;
  }
  outcome.node_after = SessionNodeOf(survivor, id);
  if (outcome.node_after.empty()) {
    outcome.lost_heard =
        recorder.AwaitSequence({ConnectionState::kConnected, ConnectionState::kLost});
  } else {
    const uint64_t renewed = SuccessfulRenewals();
    outcome.kept = Eventually([&] { return SuccessfulRenewals() >= renewed + 2; }) &&
                   (*repository)->CurrentSessionId() == id;
    const std::vector<ConnectionState> states = recorder.states();
    EXPECT_EQ(std::count(states.begin(), states.end(), ConnectionState::kLost), 0)
        << StatesToString(states);
  }
  return outcome;
}

TEST(SessionNodeTest, ASessionOnThePluginsNodeOutlivesTheRemovalOfTheServerItWasCreatedThrough) {
  const Outcome outcome = KillTheServerTheSessionWasCreatedThrough(std::nullopt);
  EXPECT_EQ(outcome.node_before, "registry-consul");
  EXPECT_EQ(outcome.node_after, "registry-consul")
      << "the session ended with " << outcome.killed << "'s node";
  EXPECT_TRUE(outcome.kept) << "the instance did not keep renewing its session";
}

// What the remedy is for: Consul's default node, the server's, takes the session along.
TEST(SessionNodeTest, ASessionOnTheServersNodeEndsWhenAutopilotRemovesThatServer) {
  const Outcome outcome = KillTheServerTheSessionWasCreatedThrough("");
  EXPECT_EQ(outcome.node_before, outcome.killed);
  EXPECT_EQ(outcome.node_after, "") << "Consul kept a session of a deregistered node";
  EXPECT_TRUE(outcome.lost_heard) << "the instance did not hear LOST";
}

}  // namespace
}  // namespace registry::faults
