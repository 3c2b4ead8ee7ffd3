// SPDX-License-Identifier: Apache-2.0
// The write path's answer to a lost reply (persistent_writes.h): a write is sent again only when
// a fresh read proves that it did not land and cannot land later; otherwise its caller is told
// that its outcome is unknown.
#include "repository/persistent_writes.h"

#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "consul/transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/mock_transport.h"

namespace registry {
namespace {

using ::registry::consul::HttpMethod;
using ::registry::consul::HttpRequest;
using ::registry::consul::testing::MockTransport;
using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Return;

// Too large for a transaction body: written by a read and a check-and-set PUT.
const std::string kBigValue(400 * 1024, 'v');

MATCHER(IsRead, "") { return arg.method == HttpMethod::kGet; }
MATCHER_P(IsCasPut, index, "") {
  const std::string* cas = arg.FindParam("cas");
  return arg.method == HttpMethod::kPut && cas != nullptr && *cas == absl::StrCat(index);
}

// The key "ns/k" at `modify_index`, as a read answers it.
consul::HttpResponse KeyAt(uint64_t modify_index) {
  return ReadResponse(200,
                      absl::StrCat(R"([{"Key":"ns/k","Value":")", absl::Base64Escape("old"),
                                   R"(","Flags":0,"CreateIndex":1,"ModifyIndex":)", modify_index,
                                   R"(,"LockIndex":0}])"),
                      modify_index);
}

absl::Status LostReply() { return absl::UnavailableError("connection closed before any reply"); }

class PersistentWritesTest : public ::testing::Test {
 protected:
  absl::Status Persist() { return PersistKey(*client_, canceller_, "/k", "ns/k", kBigValue); }

  std::shared_ptr<MockTransport> transport_ = std::make_shared<MockTransport>();
  std::unique_ptr<consul::Client> client_ =
      *consul::Client::Create({.servers = "h1:1"}, transport_);
  consul::Canceller canceller_;
};

TEST_F(PersistentWritesTest, ALostCheckAndSetIsSentAgainWhenTheKeyIsStillUnchanged) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRead(), _)).WillOnce(Return(KeyAt(5)));
  EXPECT_CALL(*transport_, Execute(IsCasPut(5), _)).WillOnce(Return(LostReply()));
  EXPECT_CALL(*transport_, Execute(IsRead(), _)).WillOnce(Return(KeyAt(5)));
  EXPECT_CALL(*transport_, Execute(IsCasPut(5), _)).WillOnce(Return(Response(200, "true")));
  EXPECT_EQ(Persist(), absl::OkStatus());
}

// The key changed: the lost write landed, or another instance wrote first. Either way a resend
// would write over what is there now.
TEST_F(PersistentWritesTest, ALostCheckAndSetIsAnsweredOutcomeUnknownWhenTheKeyChanged) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRead(), _)).WillOnce(Return(KeyAt(5)));
  EXPECT_CALL(*transport_, Execute(IsCasPut(5), _)).WillOnce(Return(LostReply()));
  EXPECT_CALL(*transport_, Execute(IsRead(), _)).WillOnce(Return(KeyAt(9)));
  const absl::Status status = Persist();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_TRUE(consul::IsUnknownOutcome(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("outcome unknown"));
}

// An absent key proves nothing: a lost create may land after another instance created and
// deleted the key, bringing it back once the caller was told it was written.
TEST_F(PersistentWritesTest, ALostCreateIsAnsweredOutcomeUnknownEvenWhenTheKeyIsStillAbsent) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRead(), _)).WillOnce(Return(ReadResponse(404, "", 3)));
  EXPECT_CALL(*transport_, Execute(IsCasPut(0), _)).WillOnce(Return(LostReply()));
  EXPECT_CALL(*transport_, Execute(IsRead(), _)).WillOnce(Return(ReadResponse(404, "", 3)));
  const absl::Status status = Persist();
  EXPECT_TRUE(consul::IsUnknownOutcome(status)) << status;
}

TEST_F(PersistentWritesTest, ALostTransactionIsSentOnceAndAnsweredOutcomeUnknown) {
  EXPECT_CALL(*transport_, Execute(_, _)).WillOnce(Return(LostReply()));
  const absl::Status status = PersistKey(*client_, canceller_, "/k", "ns/k", "small");
  EXPECT_TRUE(consul::IsUnknownOutcome(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("not sent again"));
}

}  // namespace
}  // namespace registry
