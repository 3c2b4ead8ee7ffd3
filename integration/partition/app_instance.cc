// SPDX-License-Identifier: Apache-2.0
// integration/partition/app_instance.cc
#include "integration/partition/app_instance.h"

#include <utility>

#include "absl/time/clock.h"

namespace registry::partition {

absl::StatusOr<std::unique_ptr<AppInstance>> AppInstance::Start(const std::string& netns_path,
                                                                ConsulRepositoryOptions options,
                                                                std::string ephemeral_key,
                                                                std::vector<std::string> watched) {
  std::unique_ptr<AppInstance> app(new AppInstance(std::move(ephemeral_key)));
  absl::StatusOr<std::unique_ptr<NamespaceThread>> thread = NamespaceThread::Start(netns_path);
  if (!thread.ok()) return thread.status();
  app->thread_ = *std::move(thread);
  AppInstance* self = app.get();
  absl::Status status;
  app->thread_->Run([&] {
    absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
    if (!repository.ok()) {
      status = repository.status();
      return;
    }
    self->repository_ = *std::move(repository);
    self->repository_->AddConnectionListener([self](ConnectionState state) {
      absl::MutexLock lock(&self->mu_);
      self->states_.emplace_back(absl::Now(), state);
    });
    status = self->repository_->PersistEphemeral(self->ephemeral_key_, "up");
    for (const std::string& prefix : watched) {
      if (!status.ok()) break;
      status = self->repository_
                   ->Watch(
                       prefix,
                       [self](const DataChangedEvent& event) {
                         absl::MutexLock lock(&self->mu_);
                         if (event.type == DataChangedEvent::Type::kDeleted) {
                           self->view_.erase(event.key);
                         } else {
                           self->view_[event.key] = event.value.value_or("");
                         }
                       },
                       DataListenerOptions{.replay_existing = true})
                   .status();
    }
  });
  if (!status.ok()) return status;
  return app;
}

AppInstance::~AppInstance() { Close().IgnoreError(); }

void AppInstance::Run(absl::FunctionRef<void(Repository&)> call) {
  thread_->Run([&] { call(*repository_); });
}

absl::Status AppInstance::Close() {
  if (closed_ || thread_ == nullptr) return absl::OkStatus();
  closed_ = true;
  absl::Status status;
  thread_->Run([&] {
    if (repository_ == nullptr) return;
    status = repository_->Close();
    repository_.reset();  // its threads are joined here, on the namespace thread
  });
  return status;
}

std::map<std::string, std::string> AppInstance::View() {
  absl::MutexLock lock(&mu_);
  return view_;
}

std::vector<std::pair<absl::Time, ConnectionState>> AppInstance::States() {
  absl::MutexLock lock(&mu_);
  return states_;
}

}  // namespace registry::partition
