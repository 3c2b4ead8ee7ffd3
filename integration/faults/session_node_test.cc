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

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/consul_cluster.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/state_recorder.h"
#include "nlohmann/json.hpp"
#include "repository/consul_repository.h"
#include "repository/instance_session.h"

namespace registry::faults {
namespace {

using integration::ConsulCluster;
using integration::HttpCall;
using integration::HttpReply;
using registry::testing::StateRecorder;
using registry::testing::StatesToString;

// GET `path` from server `address`, tried until it answers 200 (an election may be under way),
// at most 30 s; nullopt if it never did.
std::optional<nlohmann::json> GetJson(const std::string& address, const std::string& path) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    absl::StatusOr<HttpReply> reply = HttpCall("GET", absl::StrCat("http://", address, path));
    if (reply.ok() && reply->status == 200) {
      nlohmann::json body = nlohmann::json::parse(reply->body, nullptr, false);
      if (!body.is_discarded()) return body;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  return std::nullopt;
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

struct Outcome {
  std::string node_before;  // the session's node while every server ran
  std::string node_after;   // after autopilot removed server 2 ("" when the session is gone)
};

// Creates an instance session through server 2, kills server 2 for good and waits for Consul
// to deregister its node.
// `session_node`: ConsulRepositoryOptions::session_node, or its default when nullopt.
Outcome KillTheServerTheSessionWasCreatedThrough(std::optional<std::string> session_node,
                                                 StateRecorder& recorder) {
  absl::StatusOr<std::unique_ptr<ConsulCluster>> cluster =
      ConsulCluster::Start({.binary = integration::ConsulBinary(CONSUL_BIN), .servers = 3});
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return {};
  ConsulRepositoryOptions options;
  // Server 2 first: the session is created through it.
  options.client.servers = absl::StrCat((*cluster)->address(2), ",", (*cluster)->address(0), ",",
                                        (*cluster)->address(1));
  options.namespace_name = "nodes";
  options.session_ttl = absl::Seconds(3);
  options.session_lock_delay = absl::Seconds(1);
  if (session_node.has_value()) options.session_node = *session_node;
  absl::StatusOr<std::unique_ptr<Repository>> repository = NewConsulRepository(options);
  EXPECT_TRUE(repository.ok()) << repository.status();
  if (!repository.ok()) return {};
  (*repository)->AddConnectionListener(recorder.Listener());
  EXPECT_TRUE((*repository)->PersistEphemeral("/online/a", "a").ok());
  const std::string id = GetInstanceSession(**repository)->CurrentSessionId();
  Outcome outcome;
  outcome.node_before = SessionNodeOf((*cluster)->address(0), id);

  (*cluster)->Kill(2);
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  while (CatalogHasNode((*cluster)->address(0), "server2")) {
    if (absl::Now() >= deadline) {
      ADD_FAILURE() << "autopilot did not remove server2 within 90 s";
      (*cluster)->KeepFilesAndPrintLogs();
      return outcome;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
  outcome.node_after = SessionNodeOf((*cluster)->address(0), id);
  if (!outcome.node_after.empty()) {
    EXPECT_EQ(GetInstanceSession(**repository)->CurrentSessionId(), id);
  }
  return outcome;
}

TEST(SessionNodeTest, ASessionOnThePluginsNodeOutlivesTheRemovalOfTheServerItWasCreatedThrough) {
  StateRecorder recorder;  // outlives the repository
  const Outcome outcome = KillTheServerTheSessionWasCreatedThrough(std::nullopt, recorder);
  EXPECT_EQ(outcome.node_before, "registry-consul");
  EXPECT_EQ(outcome.node_after, "registry-consul") << "the session ended with server2's node";
  const std::vector<ConnectionState> states = recorder.states();
  EXPECT_EQ(std::count(states.begin(), states.end(), ConnectionState::kLost), 0)
      << StatesToString(states);
}

// What the remedy is for: Consul's default node, the server's, takes the session along.
TEST(SessionNodeTest, ASessionOnTheServersNodeEndsWhenAutopilotRemovesThatServer) {
  StateRecorder recorder;
  const Outcome outcome = KillTheServerTheSessionWasCreatedThrough("", recorder);
  EXPECT_EQ(outcome.node_before, "server2");
  EXPECT_EQ(outcome.node_after, "") << "Consul kept a session of a deregistered node";
  EXPECT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected, ConnectionState::kLost}))
      << StatesToString(recorder.states());
}

}  // namespace
}  // namespace registry::faults
