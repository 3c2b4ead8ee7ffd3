// SPDX-License-Identifier: Apache-2.0
#include "tests/watch/query_machine_testing.h"

#include <type_traits>
#include <variant>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "consul/kv_listing_decoder.h"
#include "nlohmann/json.hpp"

namespace registry::watch::testing {
namespace {

consul::HttpRequest Get(std::string path) {
  consul::HttpRequest request;
  request.server = "http://consul-1:8500";
  request.path = std::move(path);
  return request;
}

consul::HttpResponse Response(int status, uint64_t index, std::string body) {
  consul::HttpResponse response;
  response.status = status;
  response.headers = {{"X-Consul-Index", absl::StrCat(index)}};
  response.body = std::move(body);
  return response;
}

nlohmann::json Entry(const Kv& kv) {
  return {{"LockIndex", 0},
          {"Key", kv.key},
          {"Flags", 0},
          {"Value", kv.value.empty() ? nlohmann::json(nullptr)
                                     : nlohmann::json(absl::Base64Escape(kv.value))},
          {"CreateIndex", 1},
          {"ModifyIndex", kv.modify_index}};
}

std::string QueryName(QueryIndex query) {
  return query == kOwnQuery ? "own" : absl::StrCat("probe ", query);
}

const char* ReadName(ReadKind read) {
  switch (read) {
    case ReadKind::kList:
      return "list";
    case ReadKind::kGet:
      return "get";
    case ReadKind::kNames:
      return "names";
  }
  return "?";
}

std::string EventText(const DataChangedEvent& event) {
  return absl::StrCat(DataChangedEventTypeName(event.type), " ", event.key, "=",
                      event.value.value_or("<none>"));
}

}  // namespace

QueryRules TestRules(size_t split_threshold, int max_queries) {
  QueryRules rules;
  rules.block_query_wait = kWait;
  rules.split_guard_pause = kGuardPause;
  rules.split = SplitLimits{split_threshold, max_queries};
  rules.backoff_delay = [](int backoffs) { return backoffs * kBackoffUnit; };
  return rules;
}

Answered Reply::To(QueryIndex query, absl::Time now) const {
  return Answered{query, now, &request_, consul::ParseKvReadAnswer(request_, response_),
                  response_.ok() ? &*response_ : nullptr};
}

Reply Listing(uint64_t index, const std::vector<Kv>& entries) {
  nlohmann::json body = nlohmann::json::array();
  for (const Kv& kv : entries) body.push_back(Entry(kv));
  return Reply(Get("/v1/kv/ns?recurse"), Response(200, index, body.dump()));
}

Reply NothingThere(uint64_t index) {
  return Reply(Get("/v1/kv/ns?recurse"), Response(404, index, ""));
}

Reply KeyAnswer(uint64_t index, const Kv& entry) {
  return Reply(Get("/v1/kv/ns/k"),
               Response(200, index, nlohmann::json::array({Entry(entry)}).dump()));
}

Reply Names(uint64_t index, const std::vector<std::string>& names) {
  return Reply(Get("/v1/kv/ns/t/?keys&separator=/"),
               Response(200, index, nlohmann::json(names).dump()));
}

Reply HttpError(int status, std::string body) {
  consul::HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return Reply(Get("/v1/kv/ns?recurse"), response);
}

Reply Malformed(uint64_t index) {
  return Reply(Get("/v1/kv/ns?recurse"), Response(200, index, "{\"not\": \"a listing\"}"));
}

Reply TransportError() {
  return Reply(Get("/v1/kv/ns?recurse"), absl::UnavailableError("connection refused"));
}

Reply Cancelled() {
  return Reply(Get("/v1/kv/ns?recurse"), absl::CancelledError("the watch engine is closed"));
}

std::string Describe(const QueryAction& action) {
  return std::visit(
      [](const auto& act) -> std::string {
        using Act = std::decay_t<decltype(act)>;
        if constexpr (std::is_same_v<Act, Send>) {
          return absl::StrCat("send ", QueryName(act.query), " ", ReadName(act.read), " ", act.key,
                              " @", act.index);
        } else if constexpr (std::is_same_v<Act, Wait>) {
          return absl::StrCat("wait ", QueryName(act.query), " +",
                              absl::FormatDuration(act.until - kT0));
        } else if constexpr (std::is_same_v<Act, OpenProbes>) {
          return absl::StrCat("open ", act.count, " probes");
        } else if constexpr (std::is_same_v<Act, CloseProbes>) {
          return "close probes";
        } else if constexpr (std::is_same_v<Act, Deliver>) {
          std::vector<std::string> events;
          for (const DataChangedEvent& event : act.events) events.push_back(EventText(event));
          return absl::StrCat("deliver ", absl::StrJoin(events, ", "));
        } else if constexpr (std::is_same_v<Act, ReportKey>) {
          if (!act.entry.has_value()) return "report absent";
          return absl::StrCat("report ", act.entry->key, "=", act.entry->value, "@",
                              act.entry->modify_index);
        } else if constexpr (std::is_same_v<Act, AvoidServer>) {
          return "avoid server";
        } else if constexpr (std::is_same_v<Act, CountRelist>) {
          return "count relist";
        } else {
          return absl::StrCat("log ", LogLevelName(act.level));
        }
      },
      action);
}

std::vector<std::string> Describe(const std::vector<QueryAction>& actions) {
  std::vector<std::string> described;
  for (const QueryAction& action : actions) described.push_back(Describe(action));
  return described;
}

std::vector<std::string> Step(const QueryRules& rules, WatchState* state, const QueryInput& input) {
  return Describe(Transition(rules, state, input));
}

consul::KvListResult KvListing(uint64_t index, const std::vector<Kv>& entries) {
  consul::KvListResult listing;
  listing.meta.index = index;
  for (const Kv& kv : entries) {
    consul::DirEntry entry;
    entry.key = kv.key;
    entry.value = kv.value;
    entry.create_index = 1;
    entry.modify_index = kv.modify_index;
    listing.entries.push_back(std::move(entry));
  }
  return listing;
}

WatchState StartedTreeWatch(const QueryRules& rules, const std::string& key, uint64_t index,
                            const std::vector<Kv>& entries) {
  std::vector<DataChangedEvent> replay;
  WatchState state = NewTreeWatch(rules, WatchScope(key), KvListing(index, entries), &replay);
  Transition(rules, &state, Started{kT0});
  return state;
}

}  // namespace registry::watch::testing
