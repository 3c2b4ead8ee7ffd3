// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the dev server's request handling without sockets. Each input is a few raw
// HTTP/1.1 requests separated by NUL bytes; each is split the way the network layer does
// (http_server.cc: request line, X-Consul-Token, Authorization, Content-Length, body), its target
// decoded by ParseTarget, and the request handed to Api::Handle on a fresh in-memory Store with a
// fake clock, so one input can create a session and then use it. Must never crash, hang or leak,
// and every request gets an answer: a blocking query answers at the latest when it times out,
// statuses are HTTP statuses, a JSON answer is valid JSON, X-Consul-Index is at least 1.
// The first byte chooses the server: bit 0 turns ACLs on (master token "root"), bit 1 the
// /v1/_dev/ fault controls.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "devserver/api.h"
#include "devserver/faults.h"
#include "devserver/http_message.h"
#include "devserver/store.h"
#include "nlohmann/json.hpp"

namespace registry::devserver {
namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

bool IsToken(absl::string_view text) {
  if (text.empty()) return false;
  for (unsigned char c : text) {
    if (c <= ' ' || c >= 0x7f) return false;
  }
  return true;
}

// `raw` as the network layer hands it to the API, or nullopt for what Go's server (and Beast)
// refuse before any handler runs: a malformed request line, header or Content-Length.
std::optional<HttpRequest> SplitRequest(absl::string_view raw) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == absl::string_view::npos) return std::nullopt;
  absl::string_view body = raw.substr(head_end + 4);
  std::vector<absl::string_view> lines = absl::StrSplit(raw.substr(0, head_end), "\r\n");
  std::vector<absl::string_view> start = absl::StrSplit(lines[0], ' ');
  if (start.size() != 3 || !IsToken(start[0]) || !IsToken(start[1])) return std::nullopt;
  if (start[2] != "HTTP/1.1" && start[2] != "HTTP/1.0") return std::nullopt;
  auto target = ParseTarget(start[1]);
  if (!target.ok()) return std::nullopt;  // Go answers 400 itself
  HttpRequest request;
  request.method = std::string(start[0]);
  request.path = std::move(target->first);
  request.query = std::move(target->second);
  request.raw_query = std::string(RawQuery(start[1]));
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos || colon == 0) return std::nullopt;
    const absl::string_view name = lines[i].substr(0, colon);
    const std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    if (absl::EqualsIgnoreCase(name, "X-Consul-Token")) request.consul_token = value;
    if (absl::EqualsIgnoreCase(name, "Authorization")) request.authorization = value;
    if (absl::EqualsIgnoreCase(name, "Content-Length")) {
      uint64_t length = 0;
      if (!absl::SimpleAtoi(value, &length) || length > body.size()) return std::nullopt;
      request.content_length = length;
      body = body.substr(0, length);
    }
  }
  request.body = std::string(body);
  return request;
}

void CheckResponse(const HttpResponse& response) {
  Check(response.status >= 100 && response.status <= 599);
  if (response.content_type == "application/json") {
    Check(nlohmann::json::accept(response.body));
  }
  for (const auto& [name, value] : response.headers) {
    if (name != "X-Consul-Index") continue;
    uint64_t index = 0;
    Check(absl::SimpleAtoi(value, &index) && index >= 1);
  }
}

// Answers `request` as the network layer would, timing a blocking query out at once.
void Serve(Api& api, const HttpRequest& request) {
  ApiOutcome outcome = api.Handle(request);
  if (auto* response = std::get_if<HttpResponse>(&outcome)) return CheckResponse(*response);
  std::unique_ptr<BlockingQuery>& query = std::get<std::unique_ptr<BlockingQuery>>(outcome);
  Check(query != nullptr && query->timeout() > absl::ZeroDuration());
  uint64_t version = 0;
  std::optional<HttpResponse> response = query->Step(/*timed_out=*/false, &version);
  if (!response.has_value()) response = query->Step(/*timed_out=*/true, &version);
  Check(response.has_value());
  CheckResponse(*response);
}

}  // namespace
}  // namespace registry::devserver

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace registry::devserver;  // NOLINT: a fuzz target of this namespace only
  if (size == 0) return 0;
  absl::Time now = absl::FromUnixSeconds(1700000000);
  Store::Options options;
  options.node_name = "node1";
  options.session_ttl_min = absl::Seconds(1);
  options.clock = [&now] { return now; };
  Store store(std::move(options));
  FaultInjector faults;
  RequestStats stats;
  ApiConfig config;
  if (data[0] & 1) config.acl_master_token = "root";
  config.enable_fault_injection = (data[0] & 2) != 0;
  Api api(config, &store, &faults, &stats);
  const absl::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (absl::string_view raw : absl::StrSplit(input, '\0')) {
    std::optional<HttpRequest> request = SplitRequest(raw);
    if (request.has_value()) Serve(api, *request);
    now += absl::Seconds(3);  // lets short session TTLs run out between requests
  }
  return 0;
}
