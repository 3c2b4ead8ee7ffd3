// SPDX-License-Identifier: Apache-2.0
// Store: sessions (Consul's Session.Apply validation, sessionCreateTxn, deleteSessionTxn and
// the leader's TTL timers).
#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "devserver/go_compat.h"
#include "devserver/store.h"

namespace registry::devserver {
namespace {

constexpr absl::string_view kSerfHealth = "serfHealth";

}  // namespace

std::string Store::NewUuidLocked() {
  uint64_t high = absl::Uniform<uint64_t>(rng_);
  uint64_t low = absl::Uniform<uint64_t>(rng_);
  high = (high & ~uint64_t{0xF000}) | uint64_t{0x4000};          // version 4
  low = (low & ~(uint64_t{0xC} << 60)) | (uint64_t{0x8} << 60);  // RFC 4122 variant
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", high >> 32, (high >> 16) & 0xFFFF,
                         high & 0xFFFF, low >> 48, low & 0xFFFFFFFFFFFFULL);
}

void Store::RegisterNode(absl::string_view node) {
  absl::MutexLock lock(&mu_);
  external_nodes_.insert(std::string(node));
}

// Long by design: Consul's checks in Consul's order, each with Consul's message, then the
// create; split up, the order would be harder to compare.
absl::StatusOr<std::string> Store::CreateSession(const SessionCreateRequest& request) {
  // Validation in Consul's order (Session.Apply, then sessionCreateTxn). Consul answers all of
  // these with HTTP 500, as they come back from its RPC layer.
  if (request.node.empty()) return absl::FailedPreconditionError("Must provide Node");
  SessionBehavior behavior;
  if (request.behavior.empty() || request.behavior == "release") {
    behavior = SessionBehavior::kRelease;
  } else if (request.behavior == "delete") {
    behavior = SessionBehavior::kDelete;
  } else {
    return absl::FailedPreconditionError(
        absl::StrCat("Invalid Behavior setting '", request.behavior, "'"));
  }
  absl::Duration ttl = absl::ZeroDuration();
  if (!request.ttl.empty()) {
    absl::StatusOr<absl::Duration> parsed = ParseGoDuration(request.ttl);
    if (!parsed.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("Session TTL '", request.ttl, "' invalid: ", parsed.status().message()));
    }
    ttl = *parsed;
    if (ttl != absl::ZeroDuration() && (ttl < options_.session_ttl_min || ttl > kMaxSessionTtl)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Invalid Session TTL '", absl::ToInt64Nanoseconds(ttl), "', must be between [",
          FormatGoDuration(options_.session_ttl_min), "=", FormatGoDuration(kMaxSessionTtl), "]"));
    }
  }
  if (request.node != options_.node_name) {
    absl::MutexLock lock(&mu_);
    if (!external_nodes_.contains(request.node)) {
      return absl::FailedPreconditionError("Missing node registration");
    }
  }
  // The only check this single node has is its serf health check, always passing.
  for (const std::string& check : request.node_checks) {
    if (check != kSerfHealth) {
      return absl::FailedPreconditionError(
          absl::StrCat("Missing check '", check, "' registration"));
    }
  }
  if (!request.service_checks.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("Missing check '", request.service_checks.front().id, "' registration"));
  }

  std::function<void(absl::Time)> announce;
  Callbacks fired;
  std::string id;
  absl::Time expires = absl::InfiniteFuture();
  {
    absl::MutexLock lock(&mu_);
    do {
      id = NewUuidLocked();
    } while (sessions_.contains(id));
    Mutation m = BeginLocked();
    SessionState state;
    state.entry.id = id;
    state.entry.name = request.name;
    state.entry.node = request.node;
    state.entry.lock_delay = request.lock_delay;
    state.entry.behavior = behavior;
    state.entry.ttl = request.ttl;
    state.entry.node_checks = request.node_checks;
    state.entry.service_checks = request.service_checks;
    state.entry.create_index = m.index;
    state.entry.modify_index = m.index;
    state.ttl = ttl;
    if (ttl > absl::ZeroDuration()) {
      expires = m.now + 2 * ttl;  // Consul's SessionTTLMultiplier
      state.expires = expires;
    }
    sessions_.emplace(id, std::move(state));
    m.sessions_changed = true;
    CommitLocked(m, &fired);
    if (expires != absl::InfiniteFuture()) announce = AnnounceDeadlineLocked(expires);
  }
  for (auto& callback : fired) callback();
  if (announce) announce(expires);
  return id;
}

std::optional<SessionEntry> Store::RenewSession(absl::string_view id) {
  std::function<void(absl::Time)> announce;
  std::optional<SessionEntry> renewed;
  absl::Time expires = absl::InfiniteFuture();
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return std::nullopt;
    if (it->second.ttl > absl::ZeroDuration()) {
      const absl::Time now = options_.clock ? options_.clock() : absl::Now();
      expires = now + 2 * it->second.ttl;
      it->second.expires = expires;
      announce = AnnounceDeadlineLocked(expires);
    }
    renewed = it->second.entry;
  }
  if (announce) announce(expires);
  return renewed;
}

void Store::InvalidateSessionLocked(const std::string& id, Mutation* m) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  const SessionEntry session = std::move(it->second.entry);
  sessions_.erase(it);
  m->sessions_changed = true;

  const absl::Duration delay = std::min(session.lock_delay, kMaxLockDelay);
  std::vector<std::string> held;
  auto keys = held_keys_.find(id);
  if (keys != held_keys_.end()) held.assign(keys->second.begin(), keys->second.end());
  for (const std::string& key : held) {
    if (session.behavior == SessionBehavior::kRelease) {
      DirEntry released = kvs_.find(key)->second;
      released.session.clear();
      SetLocked(std::move(released), true, m);
    } else {
      DeleteLocked(key, m);
    }
    if (delay > absl::ZeroDuration()) lock_delays_[key] = m->now + delay;
  }
}

bool Store::InvalidateAndCommit(absl::string_view id) {
  Callbacks fired;
  {
    absl::MutexLock lock(&mu_);
    if (!sessions_.contains(id)) return false;
    Mutation m = BeginLocked();
    InvalidateSessionLocked(std::string(id), &m);
    CommitLocked(m, &fired);
  }
  for (auto& callback : fired) callback();
  return true;
}

bool Store::DestroySession(absl::string_view id) { return InvalidateAndCommit(id); }

bool Store::ExpireSession(absl::string_view id) { return InvalidateAndCommit(id); }

Store::SessionsRead Store::GetSession(absl::string_view id) const {
  absl::ReaderMutexLock lock(&mu_);
  SessionsRead read{{}, sessions_index_, version_};
  auto it = sessions_.find(id);
  if (it != sessions_.end()) read.sessions.push_back(it->second.entry);
  return read;
}

Store::SessionsRead Store::ListSessions() const {
  absl::ReaderMutexLock lock(&mu_);
  SessionsRead read{{}, sessions_index_, version_};
  for (const auto& [id, state] : sessions_) read.sessions.push_back(state.entry);
  return read;
}

Store::SessionsRead Store::NodeSessions(absl::string_view node) const {
  absl::ReaderMutexLock lock(&mu_);
  SessionsRead read{{}, sessions_index_, version_};
  for (const auto& [id, state] : sessions_) {
    if (state.entry.node == node) read.sessions.push_back(state.entry);
  }
  return read;
}

}  // namespace registry::devserver
