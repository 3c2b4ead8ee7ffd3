// SPDX-License-Identifier: Apache-2.0
#include "integration/watch/watch_fixture.h"

#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "repository/key_space.h"
#include "watch/diff.h"

namespace registry::watch::testing {

DataChangedListener Mirror::Listener() {
  return [this](const DataChangedEvent& event) {
    absl::MutexLock lock(&mu_);
    if (in_call_) violations_.push_back("concurrent call: " + Describe(event));
    in_call_ = true;
    auto it = view_.find(event.key);
    const std::string value = event.value.value_or("<none>");
    if (!event.value.has_value()) violations_.push_back("no value: " + Describe(event));
    switch (event.type) {
      case DataChangedEvent::Type::kAdded:
        if (it != view_.end()) violations_.push_back("ADDED a known key: " + Describe(event));
        view_[event.key] = value;
        break;
      case DataChangedEvent::Type::kUpdated:
        if (it == view_.end()) violations_.push_back("UPDATED an unknown key: " + Describe(event));
        view_[event.key] = value;
        break;
      case DataChangedEvent::Type::kDeleted:
        if (it == view_.end()) {
          violations_.push_back("DELETED an unknown key: " + Describe(event));
        } else {
          if (it->second != value) {
            violations_.push_back(
                absl::StrCat("DELETED with value '", value, "', last known '", it->second, "'"));
          }
          view_.erase(it);
        }
        break;
    }
    events_.push_back(event);
    in_call_ = false;
  };
}

bool Mirror::AwaitView(const KeyValues& expected, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto equal = [this, &expected]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return view_ == expected; };
  return mu_.AwaitWithTimeout(absl::Condition(&equal), timeout);
}

bool Mirror::AwaitEventCount(size_t count, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, count]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return events_.size() >= count; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

KeyValues Mirror::view() {
  absl::MutexLock lock(&mu_);
  return view_;
}

std::vector<DataChangedEvent> Mirror::events() {
  absl::MutexLock lock(&mu_);
  return events_;
}

std::vector<std::string> Mirror::violations() {
  absl::MutexLock lock(&mu_);
  return violations_;
}

DataChangedEvent Event(DataChangedEvent::Type type, std::string key, std::string value) {
  DataChangedEvent event;
  event.type = type;
  event.key = std::move(key);
  event.value = std::move(value);
  return event;
}

std::string Describe(const DataChangedEvent& event) {
  return absl::StrCat(DataChangedEventTypeName(event.type), " ", event.key, "=",
                      event.value.value_or("<none>"));
}

std::string Describe(const std::vector<DataChangedEvent>& events) {
  return absl::StrJoin(events, ", ", [](std::string* out, const DataChangedEvent& event) {
    out->append(Describe(event));
  });
}

std::string Describe(const KeyValues& view) {
  return absl::StrCat("{", absl::StrJoin(view, ", ", absl::PairFormatter("=")), "}");
}

WatchEngineOptions WatchTest::EngineOptions(absl::Duration block_wait) {
  WatchEngineOptions options;
  options.block_query_wait = block_wait;
  options.retry_min = absl::Milliseconds(20);
  options.retry_max = absl::Milliseconds(500);
  auto space = std::make_shared<KeySpace>("ns");
  options.key_mapper = [space](absl::string_view consul_key) {
    return space->RepositoryKey(consul_key);
  };
  return options;
}

std::unique_ptr<WatchEngine> WatchTest::NewEngine(const WatchEngineOptions& options) {
  consul::ClientOptions client = ClientOptionsForCodeUnderTest();
  client.request_timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<WatchEngine>> engine = WatchEngine::Create(client, options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

void WatchTest::Put(const std::string& consul_key, const std::string& value) {
  absl::StatusOr<bool> written = false;
  Eventually([&] { return (written = raw().KvPut(consul_key, value)).ok(); });
  ASSERT_TRUE(written.ok()) << "put " << consul_key << ": " << written.status();
}

void WatchTest::Delete(const std::string& consul_key, bool recurse) {
  consul::KvDeleteOptions options;
  options.recurse = recurse;
  absl::StatusOr<bool> deleted = false;
  Eventually([&] { return (deleted = raw().KvDelete(consul_key, options)).ok(); });
  ASSERT_TRUE(deleted.ok()) << "delete " << consul_key << ": " << deleted.status();
}

KeyValues WatchTest::ServerView(const std::string& consul_key) {
  absl::StatusOr<consul::KvListResult> listing;
  Eventually([&] { return (listing = raw().KvList(consul_key)).ok(); });
  EXPECT_TRUE(listing.ok()) << listing.status();
  KeyValues view;
  if (!listing.ok()) return view;
  WatchScope scope(consul_key);
  KeySpace space("ns");
  for (const consul::DirEntry& entry : listing->entries) {
    if (!scope.Contains(entry.key)) continue;
    std::optional<std::string> key = space.RepositoryKey(entry.key);
    if (key.has_value()) view[*key] = entry.value;
  }
  return view;
}

}  // namespace registry::watch::testing
