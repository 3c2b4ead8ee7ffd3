// SPDX-License-Identifier: Apache-2.0
#include "devserver/dev_server.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "devserver/api.h"
#include "devserver/faults.h"
#include "devserver/go_compat.h"
#include "devserver/http_server.h"
#include "devserver/store.h"

namespace registry::devserver {
namespace {

struct HostPort {
  std::string host;
  int port = 0;
};

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("http_addr: '", address, "' is not host:port (", why, ")"));
  };
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return bad("missing port");
  absl::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return bad("missing host");
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return bad("port must be 0-65535");
  }
  return HostPort{std::string(host), port};
}

std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "dev";
  return name;
}

absl::Status CheckPositive(absl::string_view option, absl::Duration value) {
  if (value > absl::ZeroDuration()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(option, ": must be positive, got ", FormatGoDuration(value)));
}

}  // namespace

DevServer::DevServer() = default;

DevServer::~DevServer() { Stop(); }

absl::StatusOr<std::unique_ptr<DevServer>> DevServer::Start(ServerOptions options) {
  absl::StatusOr<HostPort> address = ParseHostPort(options.http_addr);
  if (!address.ok()) return address.status();
  for (const auto& [name, value] :
       {std::pair<absl::string_view, absl::Duration>{"session_ttl_min", options.session_ttl_min},
        {"default_query_time", options.default_query_time},
        {"max_query_time", options.max_query_time},
        {"read_timeout", options.read_timeout}}) {
    if (absl::Status positive = CheckPositive(name, value); !positive.ok()) return positive;
  }
  if (options.session_ttl_min > Store::kMaxSessionTtl) {
    return absl::InvalidArgumentError(
        absl::StrCat("session_ttl_min: ", FormatGoDuration(options.session_ttl_min),
                     " is above the 24h maximum session TTL"));
  }
  if (options.max_conns_per_client < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_conns_per_client: ", options.max_conns_per_client, " is negative (0: no limit)"));
  }
  if (options.datacenter.empty()) {
    return absl::InvalidArgumentError("datacenter: must not be empty");
  }
  if (options.node_name.empty()) options.node_name = LocalHostName();

  std::unique_ptr<DevServer> server(new DevServer());
  server->host_ = address->host == "localhost" ? "127.0.0.1" : address->host;
  Store::Options store_options;
  store_options.node_name = options.node_name;
  store_options.session_ttl_min = options.session_ttl_min;
  server->store_ = std::make_unique<Store>(std::move(store_options));
  server->faults_ = std::make_unique<FaultInjector>();
  server->stats_ = std::make_unique<RequestStats>();

  ApiConfig config;
  config.datacenter = options.datacenter;
  config.node_name = options.node_name;
  config.acl_master_token = options.acl_master_token;
  config.enable_fault_injection = options.enable_fault_injection;
  config.default_query_time = options.default_query_time;
  config.max_query_time = options.max_query_time;
  const bool wildcard = server->host_ == "0.0.0.0" || server->host_ == "::";
  config.advertise_host = wildcard ? "127.0.0.1" : server->host_;
  server->api_ = std::make_unique<Api>(std::move(config), server->store_.get(),
                                       server->faults_.get(), server->stats_.get());

  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Start(
      server->host_, address->port, server->api_.get(), server->store_.get(), server->faults_.get(),
      ConnectionLimits{options.read_timeout, options.max_conns_per_client});
  if (!http.ok()) return http.status();
  server->http_ = *std::move(http);
  server->api_->set_http_port(server->http_->port());
  return server;
}

std::string DevServer::address() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return v6 ? absl::StrCat("[", host_, "]:", port()) : absl::StrCat(host_, ":", port());
}

int DevServer::port() const { return http_->port(); }

void DevServer::Stop() {
  if (http_ != nullptr) http_->Stop();
}

void DevServer::SetLatency(absl::Duration latency) { faults_->SetLatency(latency); }

void DevServer::FailNextRequests(int count) { faults_->FailNextRequests(count); }

void DevServer::DropNextConnections(int count) { faults_->DropNextConnections(count); }

void DevServer::DropNextReplies(int count, std::string path_prefix, std::string method) {
  faults_->DropNextReplies(count, std::move(path_prefix), std::move(method));
}

void DevServer::FailNextRepliesAfterApplying(int count, std::string path_prefix,
                                             std::string method) {
  faults_->FailNextRepliesAfterApplying(count, std::move(path_prefix), std::move(method));
}

void DevServer::DropAllConnections() { http_->DropAllConnections(); }

void DevServer::ClearFaults() { faults_->Clear(); }

absl::Status DevServer::ExpireSession(absl::string_view id) {
  if (store_->ExpireSession(id)) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("session '", id, "' not found"));
}

void DevServer::ResetIndex(uint64_t base) { store_->ResetIndex(base); }

std::map<std::string, uint64_t> DevServer::RequestCounts() const { return stats_->Snapshot(); }

void DevServer::ResetRequestCounts() { stats_->Reset(); }

size_t DevServer::connection_count() const { return http_->connection_count(); }

uint64_t DevServer::accepted_connection_count() const { return http_->accepted_count(); }

Store& DevServer::store() { return *store_; }

}  // namespace registry::devserver
