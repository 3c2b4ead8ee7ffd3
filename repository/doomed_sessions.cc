// SPDX-License-Identifier: Apache-2.0
// repository/doomed_sessions.cc
#include "repository/doomed_sessions.h"

#include <algorithm>
#include <utility>

namespace registry {

void DoomedSessions::Add(std::string id, absl::Time lost_at) {
  if (doomed_.size() == kMaxRemembered) doomed_.erase(doomed_.begin());
  doomed_.push_back(Doomed{std::move(id), lost_at, lost_at + give_up_after_});
}

std::optional<std::string> DoomedSessions::DueAt(absl::Time now) {
  std::erase_if(doomed_, [now](const Doomed& doomed) { return now >= doomed.give_up_at; });
  for (const Doomed& doomed : doomed_) {
    if (now >= doomed.next_attempt) return doomed.id;
  }
  return std::nullopt;
}

absl::Time DoomedSessions::NextAttempt() const {
  absl::Time next = absl::InfiniteFuture();
  for (const Doomed& doomed : doomed_) next = std::min(next, doomed.next_attempt);
  return next;
}

void DoomedSessions::Destroyed(const std::string& id) {
  std::erase_if(doomed_, [&id](const Doomed& doomed) { return doomed.id == id; });
}

void DoomedSessions::Failed(const std::string& id, absl::Time retry_at) {
  for (Doomed& doomed : doomed_) {
    if (doomed.id == id) doomed.next_attempt = retry_at;
  }
}

std::vector<std::string> DoomedSessions::TakeAll() {
  std::vector<std::string> ids;
  ids.reserve(doomed_.size());
  for (Doomed& doomed : doomed_) ids.push_back(std::move(doomed.id));
  doomed_.clear();
  return ids;
}

}  // namespace registry
