// SPDX-License-Identifier: Apache-2.0
// Fuzz target: every Consul response parser of consul/ (kv, session, txn, status, the
// query headers and the error mapping), on a response whose status, query headers and body come
// from the input. Parsers must never crash, hang or leak, and must keep the promises of their
// headers: an error names the request it answers, success only for the statuses the parser
// documents, X-Consul-Index at least 1, the HTTP status carried by a mapped error.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "consul/errors.h"
#include "consul/http_types.h"
#include "consul/kv.h"
#include "consul/query.h"
#include "consul/session.h"
#include "consul/status.h"
#include "consul/txn.h"

namespace {

using namespace registry::consul;  // NOLINT: a fuzz target of this namespace only

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

// A failed parse names the request ("consul GET /v1/kv/a: ..."); a successful one answers one of
// the statuses in `ok_statuses`.
template <typename T>
void CheckOutcome(const absl::StatusOr<T>& result, const HttpRequest& request,
                  const HttpResponse& response, std::initializer_list<int> ok_statuses) {
  if (!result.ok()) {
    Check(absl::StartsWith(result.status().message(), RequestLabel(request)));
    return;
  }
  bool documented = false;
  for (int status : ok_statuses) documented |= status == response.status;
  Check(documented);
}

void CheckMeta(const QueryMeta& meta) {
  Check(meta.index >= 1);
  Check(meta.last_contact >= absl::ZeroDuration());
}

HttpRequest Built(absl::StatusOr<HttpRequest> request) {
  Check(request.ok());
  return *std::move(request);
}

void ParseKv(int parser, const HttpResponse& response) {
  const QueryOptions query{.index = 7, .wait = absl::Seconds(1)};
  switch (parser) {
    case 0: {
      const HttpRequest request = Built(BuildKvGetRequest("ns/a", query));
      auto result = ParseKvGetResponse(request, response);
      CheckOutcome(result, request, response, {200, 404});
      if (result.ok()) CheckMeta(result->meta);
      break;
    }
    case 1: {
      const HttpRequest request = Built(BuildKvGetRawRequest("ns/a", query));
      auto result = ParseKvGetRawResponse(request, response);
      CheckOutcome(result, request, response, {200, 404});
      if (result.ok()) Check(result->value.has_value() == (response.status == 200));
      break;
    }
    case 2: {
      const HttpRequest request = Built(BuildKvListRequest("ns/", query));
      auto result = ParseKvListResponse(request, response);
      CheckOutcome(result, request, response, {200, 404});
      if (result.ok()) CheckMeta(result->meta);
      break;
    }
    case 3: {
      const HttpRequest request = Built(BuildKvKeysRequest("ns/", "/", query));
      auto result = ParseKvKeysResponse(request, response);
      CheckOutcome(result, request, response, {200, 404});
      if (result.ok()) CheckMeta(result->meta);
      break;
    }
    case 4: {
      const HttpRequest request = Built(BuildKvPutRequest("ns/a", "v", {.cas = 3}));
      CheckOutcome(ParseKvPutResponse(request, response), request, response, {200});
      break;
    }
    default: {
      const HttpRequest request = Built(BuildKvDeleteRequest("ns/a", {.recurse = true}));
      CheckOutcome(ParseKvDeleteResponse(request, response), request, response, {200});
      break;
    }
  }
}

void ParseOther(int parser, const HttpResponse& response) {
  switch (parser) {
    case 6: {
      const HttpRequest request = Built(BuildSessionCreateRequest({.ttl = absl::Seconds(10)}));
      CheckOutcome(ParseSessionCreateResponse(request, response), request, response, {200});
      break;
    }
    case 7: {
      const HttpRequest request = Built(BuildSessionRenewRequest("s-1"));
      auto result = ParseSessionRenewResponse(request, response);
      CheckOutcome(result, request, response, {200, 404});
      break;
    }
    case 8: {
      const HttpRequest request = Built(BuildSessionDestroyRequest("s-1"));
      const absl::Status status = ParseSessionDestroyResponse(request, response);
      Check(status.ok() ? response.status == 200
                        : absl::StartsWith(status.message(), RequestLabel(request)));
      break;
    }
    case 9: {
      const HttpRequest request = Built(BuildSessionInfoRequest("s-1", {}));
      auto result = ParseSessionInfoResponse(request, response);
      CheckOutcome(result, request, response, {200, 404});
      if (result.ok()) CheckMeta(result->meta);
      break;
    }
    case 10: {
      const HttpRequest request = Built(BuildSessionListRequest({}));
      auto result = ParseSessionListResponse(request, response);
      CheckOutcome(result, request, response, {200});
      if (result.ok()) CheckMeta(result->meta);
      break;
    }
    case 11: {
      const HttpRequest request = Built(BuildTxnRequest({TxnOp::Get("ns/a")}));
      auto result = ParseTxnResponse(request, response);
      CheckOutcome(result, request, response, {200, 409});
      if (result.ok()) {
        Check(result->committed == (response.status == 200));
        Check(result->committed || !result->errors.empty());
        if (result->meta.has_value()) CheckMeta(*result->meta);
      }
      break;
    }
    default: {
      const HttpRequest request = BuildStatusLeaderRequest();
      CheckOutcome(ParseStatusLeaderResponse(request, response), request, response, {200});
      break;
    }
  }
}

constexpr int kStatuses[] = {200, 404, 409, 400, 403, 413, 429, 500, 502, 503, 504, 301, 0, 599};
constexpr const char* kHeaderNames[] = {"X-Consul-Index", "X-Consul-KnownLeader",
                                        "X-Consul-LastContact"};

HttpResponse ResponseFrom(FuzzedDataProvider& input) {
  HttpResponse response;
  const uint8_t status_pick = input.ConsumeIntegral<uint8_t>();
  response.status = status_pick < 240 ? kStatuses[status_pick % std::size(kStatuses)]
                                      : input.ConsumeIntegral<int>();
  // Bits 0-2: which query headers are sent; bit 3: lower-case names; bit 4: X-Consul-Index twice.
  const uint8_t header_bits = input.ConsumeIntegral<uint8_t>();
  for (int i = 0; i < 3; ++i) {
    if ((header_bits & (1 << i)) == 0) continue;
    std::string name = kHeaderNames[i];
    if (header_bits & 8) name = absl::AsciiStrToLower(name);
    response.headers.emplace_back(name, input.ConsumeRandomLengthString(40));
  }
  if (header_bits & 16) response.headers.emplace_back("X-Consul-Index", "5");
  response.body = input.ConsumeRemainingBytesAsString();
  return response;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  const int parser = input.ConsumeIntegralInRange<int>(0, 12);
  const HttpResponse response = ResponseFrom(input);
  if (parser < 6) {
    ParseKv(parser, response);
  } else {
    ParseOther(parser, response);
  }
  // The error mapping itself, for any status: never OK, carries the status, names the request.
  const HttpRequest request = BuildStatusLeaderRequest();
  const absl::Status error = ErrorFromResponse(request, response);
  Check(!error.ok());
  Check(HttpStatusOf(error) == response.status);
  Check(absl::StartsWith(error.message(), RequestLabel(request)));
  return 0;
}
