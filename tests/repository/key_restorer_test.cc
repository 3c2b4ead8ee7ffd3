// SPDX-License-Identifier: Apache-2.0
// The key restorer (key_restorer.h) over a scripted transport: what it binds after a loss, what it
// says when every key is back, what it forgets, and which lost sessions it leaves to Stop().
#include "repository/key_restorer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "consul/transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/mock_transport.h"

namespace registry {
namespace {

using ::registry::consul::HttpMethod;
using ::registry::consul::HttpRequest;
using ::registry::consul::HttpResponse;
using ::registry::consul::testing::MockTransport;
using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::NiceMock;

constexpr absl::Duration kWait = absl::Seconds(10);  // a bound on each wait, never a pause

HttpResponse TxnCommitted() { return Response(200, R"({"Results":[],"Errors":null})"); }
// The first op (the check that key 0 is absent) failed: the key exists.
HttpResponse TxnFirstKeyExists() {
  return Response(409, R"({"Results":null,"Errors":[{"OpIndex":0,"What":"key exists"}]})");
}
// `key` held by `session`, as a consistent read answers it.
HttpResponse HeldBy(const std::string& key, const std::string& session) {
  return ReadResponse(200,
                      R"([{"Key":")" + key + R"(","Value":"dg==","Flags":0,"CreateIndex":3,)" +
                          R"("ModifyIndex":3,"LockIndex":1,"Session":")" + session + R"("}])",
                      3);
}

class KeyRestorerTest : public ::testing::Test {
 protected:
  KeyRestorerTest() {
    ON_CALL(*transport_, Execute(_, _)).WillByDefault([this](const HttpRequest& request, auto*) {
      absl::MutexLock lock(&mu_);
      paths_.push_back(request.path);
      return request.path == "/v1/txn" ? TxnCommitted() : Response(200, "true");
    });
  }

  // Remembers `key` as bound to session "s1", which is then lost; "s2" is live.
  void RememberBoundToALostSession(const std::string& key, bool exclusive = false) {
    keys_.Remember(key, RememberedKeys::Key{"v", exclusive, "s1"});
  }

  KeyRestorer::Callbacks Callbacks() {
    return {.restored =
                [this](const std::string& session) {
                  absl::MutexLock lock(&mu_);
                  restored_.push_back(session);
                  if (restored_.size() == 1) {
                    if (on_first_restored_) on_first_restored_();
                    restored_done_.Notify();
                  }
                  if (restored_.size() == 2) restored_twice_.Notify();
                },
            .session_invalid = [](const std::string&) {}};
  }

  std::vector<std::string> Restored() {
    absl::MutexLock lock(&mu_);
    return restored_;
  }

  std::vector<std::string> Paths() {
    absl::MutexLock lock(&mu_);
    return paths_;
  }

  std::shared_ptr<NiceMock<MockTransport>> transport_ = std::make_shared<NiceMock<MockTransport>>();
  std::unique_ptr<consul::Client> client_ =
      *consul::Client::Create({.servers = "h1:1"}, transport_);
  consul::Canceller canceller_;
  SessionKeeperOptions options_ = [] {
    SessionKeeperOptions options;
    options.ttl = absl::Seconds(10);
    options.lock_retry = absl::Milliseconds(20);
    return options;
  }();
  RememberedKeys keys_;
  SessionCalls calls_{*client_, canceller_, options_};

  absl::Mutex mu_;
  std::vector<std::string> paths_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> restored_ ABSL_GUARDED_BY(mu_);
  std::function<void()> on_first_restored_;  // set before the restorer starts
  absl::Notification restored_done_;
  absl::Notification restored_twice_;
};

TEST_F(KeyRestorerTest, BindsEveryKeyOfTheLostSessionToTheNewOneThenSaysSo) {
  RememberBoundToALostSession("ns/a");
  RememberBoundToALostSession("ns/b");
  KeyRestorer restorer(*client_, canceller_, options_, keys_, calls_, Callbacks());
  restorer.SessionLost("s1", /*maybe_alive=*/false);
  restorer.SessionCreated("s2");
  restorer.NeedRestore();

  ASSERT_TRUE(restored_done_.WaitForNotificationWithTimeout(kWait));
  EXPECT_THAT(Restored(), ElementsAre("s2"));
  EXPECT_EQ(keys_.Find("ns/a")->bound_session, "s2");
  EXPECT_EQ(keys_.Find("ns/b")->bound_session, "s2");
  EXPECT_THAT(restorer.Stop(), IsEmpty());
}

TEST_F(KeyRestorerTest, AKeyRememberedWhileItSaidRestoredIsBoundByAnotherPass) {
  // What the session keeper does when a write remembered a key bound to an older session after
  // the pass found none: it asks again, from the callback, and hears `restored` once more.
  RememberBoundToALostSession("ns/a");
  KeyRestorer restorer(*client_, canceller_, options_, keys_, calls_, Callbacks());
  on_first_restored_ = [this, &restorer] {
    RememberBoundToALostSession("ns/late");
    restorer.NeedRestore();
  };
  restorer.SessionCreated("s2");
  restorer.NeedRestore();

  ASSERT_TRUE(restored_twice_.WaitForNotificationWithTimeout(kWait));
  EXPECT_THAT(Restored(), ElementsAre("s2", "s2"));
  EXPECT_EQ(keys_.Find("ns/late")->bound_session, "s2");
  restorer.Stop();
}

TEST_F(KeyRestorerTest, AnExclusiveKeyAnotherInstanceHoldsIsForgottenNotTaken) {
  RememberBoundToALostSession("ns/claim", /*exclusive=*/true);
  EXPECT_CALL(*transport_, Execute(_, _))
      .WillRepeatedly([](const HttpRequest& request, auto*) -> absl::StatusOr<HttpResponse> {
        if (request.path == "/v1/txn") return TxnFirstKeyExists();
        if (request.method == HttpMethod::kGet) return HeldBy("ns/claim", "someone-else");
        return Response(200, "true");
      });
  KeyRestorer restorer(*client_, canceller_, options_, keys_, calls_, Callbacks());
  restorer.SessionLost("s1", /*maybe_alive=*/false);
  restorer.SessionCreated("s2");
  restorer.NeedRestore();

  ASSERT_TRUE(restored_done_.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(keys_.Contains("ns/claim"));
  restorer.Stop();
}

TEST_F(KeyRestorerTest, ALostSessionIsDestroyedOnceANewOneIsLiveAndLeftToStopOtherwise) {
  {
    KeyRestorer restorer(*client_, canceller_, options_, keys_, calls_, Callbacks());
    restorer.SessionLost("s1", /*maybe_alive=*/true);
    restorer.NeedRestore();  // no live session: nothing is sent
    EXPECT_THAT(restorer.Stop(), ElementsAre("s1"));
    EXPECT_THAT(Paths(), IsEmpty());
  }
  KeyRestorer restorer(*client_, canceller_, options_, keys_, calls_, Callbacks());
  restorer.SessionLost("s1", /*maybe_alive=*/true);
  restorer.SessionCreated("s2");
  restorer.NeedRestore();
  ASSERT_TRUE(restored_done_.WaitForNotificationWithTimeout(kWait));
  // The destroy comes first: while the lost session lives it holds the keys a pass would bind.
  const std::vector<std::string> paths = Paths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), "/v1/session/destroy/s1");
  EXPECT_THAT(restorer.Stop(), IsEmpty());
}

}  // namespace
}  // namespace registry
