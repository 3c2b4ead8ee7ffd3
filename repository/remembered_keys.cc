// SPDX-License-Identifier: Apache-2.0
// repository/remembered_keys.cc
#include "repository/remembered_keys.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "consul/transport.h"

namespace registry {

absl::Status RememberedKeys::PersistentWrites(absl::Span<const std::string> consul_keys, bool tree,
                                              absl::FunctionRef<absl::Status()> write) {
  absl::ReaderMutexLock order(&write_order_);
  const absl::Status written = write();
  // A write whose outcome is unknown may land (or have landed): the keys are not to be bound
  // again with their old values after a session loss, which would undo it.
  if (!written.ok() && !consul::IsUnknownOutcome(written)) return written;
  absl::MutexLock lock(&mu_);
  for (const std::string& consul_key : consul_keys) {
    keys_.erase(consul_key);
    if (!tree) continue;
    const std::string prefix = absl::StrCat(consul_key, "/");
    auto it = keys_.lower_bound(prefix);
    while (it != keys_.end() && absl::StartsWith(it->first, prefix)) it = keys_.erase(it);
  }
  return written;
}

absl::Status RememberedKeys::Update(absl::string_view consul_key, absl::string_view value,
                                    absl::FunctionRef<absl::Status()> update) {
  {
    absl::ReaderMutexLock order(&write_order_);
    // Keys are only remembered under the exclusive order, so this answer holds for as long as
    // the shared order is held.
    if (!Contains(consul_key)) return update();
  }
  absl::WriterMutexLock order(&write_order_);
  const absl::Status updated = update();
  // An update whose outcome is unknown may land (or have landed): a rebind after a session loss
  // writes its value, not the older one it may have replaced.
  if (!updated.ok() && !consul::IsUnknownOutcome(updated)) return updated;
  absl::MutexLock lock(&mu_);
  if (auto it = keys_.find(consul_key); it != keys_.end()) it->second.value = std::string(value);
  return updated;
}

std::optional<RememberedKeys::Key> RememberedKeys::Find(absl::string_view consul_key) const {
  absl::MutexLock lock(&mu_);
  auto it = keys_.find(consul_key);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

bool RememberedKeys::Contains(absl::string_view consul_key) const {
  absl::MutexLock lock(&mu_);
  return keys_.contains(consul_key);
}

void RememberedKeys::Remember(absl::string_view consul_key, Key key) {
  absl::MutexLock lock(&mu_);
  keys_.insert_or_assign(std::string(consul_key), std::move(key));
}

void RememberedKeys::MarkBound(absl::string_view consul_key, const std::string& session) {
  absl::MutexLock lock(&mu_);
  if (auto it = keys_.find(consul_key); it != keys_.end()) it->second.bound_session = session;
}

void RememberedKeys::Forget(absl::string_view consul_key) {
  absl::MutexLock lock(&mu_);
  if (auto it = keys_.find(consul_key); it != keys_.end()) keys_.erase(it);
}

std::vector<std::string> RememberedKeys::BoundTo(const std::string& session) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> bound;
  for (const auto& [consul_key, key] : keys_) {
    if (key.bound_session == session) bound.push_back(consul_key);
  }
  return bound;
}

std::vector<std::pair<std::string, RememberedKeys::Key>> RememberedKeys::Unbound(
    const std::string& session) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, Key>> unbound;
  for (const auto& [consul_key, key] : keys_) {
    if (key.bound_session != session) unbound.emplace_back(consul_key, key);
  }
  return unbound;
}

void RememberedKeys::Clear() {
  absl::MutexLock lock(&mu_);
  keys_.clear();
}

}  // namespace registry
