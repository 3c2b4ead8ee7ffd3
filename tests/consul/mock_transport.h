// SPDX-License-Identifier: Apache-2.0
// tests/consul/mock_transport.h
//
// gmock Transport and small response factories shared by the client unit tests.
#ifndef TESTS_CONSUL_MOCK_TRANSPORT_H_
#define TESTS_CONSUL_MOCK_TRANSPORT_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "consul/transport.h"
#include "gmock/gmock.h"

namespace registry::consul::testing {

class MockTransport : public Transport {
 public:
  MOCK_METHOD(absl::StatusOr<HttpResponse>, Execute,
              (const HttpRequest& request, Canceller* canceller), (override));
};

inline HttpResponse Response(int status, std::string body, HeaderList headers = {}) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  response.headers = std::move(headers);
  return response;
}

// A read response carrying the usual query headers.
inline HttpResponse ReadResponse(int status, std::string body, uint64_t index) {
  return Response(status, std::move(body),
                  {{"X-Consul-Index", absl::StrCat(index)},
                   {"X-Consul-KnownLeader", "true"},
                   {"X-Consul-LastContact", "0"}});
}

}  // namespace registry::consul::testing

#endif  // TESTS_CONSUL_MOCK_TRANSPORT_H_
