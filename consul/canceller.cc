// SPDX-License-Identifier: Apache-2.0
#include "consul/canceller.h"

#include <algorithm>

namespace registry::consul {

Canceller::Canceller(Canceller* parent, absl::Time deadline) : deadline_(deadline) {
  // The parent runs the link under its own mutex, which is never taken while ours is held.
  parent_link_ = std::make_unique<Waker>(parent, [this] { Cancel(); });
  if (parent_link_->cancelled()) Cancel();
}

// Destroys the link first: afterwards the parent no longer calls into this object.
Canceller::~Canceller() { parent_link_.reset(); }

void Canceller::Cancel() {
  // Callbacks run under mu_ so that Unregister() (which takes mu_) cannot return while one is
  // running: a transport may free what its callback touches right after its Waker is destroyed.
  absl::MutexLock lock(&mu_);
  if (cancelled_) return;
  cancelled_ = true;
  for (auto& [id, wake] : wakers_) wake();
  wakers_.clear();
}

bool Canceller::IsCancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

uint64_t Canceller::Register(std::function<void()> wake) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return 0;
  uint64_t id = next_id_++;
  wakers_.emplace_back(id, std::move(wake));
  return id;
}

void Canceller::Unregister(uint64_t id) {
  absl::MutexLock lock(&mu_);
  wakers_.erase(std::remove_if(wakers_.begin(), wakers_.end(),
                               [id](const auto& entry) { return entry.first == id; }),
                wakers_.end());
}

Canceller::Waker::Waker(Canceller* canceller, std::function<void()> wake) : canceller_(canceller) {
  if (canceller_ == nullptr) return;
  id_ = canceller_->Register(std::move(wake));
  cancelled_ = id_ == 0;
}

Canceller::Waker::~Waker() {
  if (canceller_ != nullptr && id_ != 0) canceller_->Unregister(id_);
}

}  // namespace registry::consul
