// SPDX-License-Identifier: Apache-2.0
// lock_safety_worker: one contender of the multi-process lock-safety test.
//
//   lock_safety_worker --servers=127.0.0.1:PORT --rounds=N [--name=safety] [--key=/safety/count]
//
// Runs `rounds` critical sections on lock `name`: read the counter at `key`, write it back plus
// one with a fenced write (PersistIfHeld), unlock. If two processes ever held the lock at once,
// increments would be lost or a fenced write refused. Exit status: 0 on success, 1 on any error.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "instance/instance.h"
#include "lock/lock_manager.h"

DEFINE_string(servers, "127.0.0.1:8500", "Consul servers");
DEFINE_string(token, "", "ACL token");
DEFINE_string(ns, "safety", "repository namespace");
DEFINE_string(name, "safety", "lock name");
DEFINE_string(key, "/safety/count", "counter key");
DEFINE_int32(rounds, 10, "critical sections to run");

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "lock_safety_worker: %s\n", status.ToString().c_str());
  return 1;
}

int Run() {
  registry::ConsulRepositoryOptions options;
  options.client.servers = FLAGS_servers;
  options.client.token = FLAGS_token;
  options.namespace_name = FLAGS_ns;
  options.session_ttl = absl::Seconds(2);
  options.session_lock_delay = absl::Milliseconds(500);
  options.lock_retry = absl::Milliseconds(50);
  options.block_query_wait = absl::Seconds(5);
  absl::StatusOr<registry::ConsulInstance> instance = registry::NewConsulInstance(options);
  if (!instance.ok()) return Fail(instance.status());
  registry::ConsulRepository& repository = *instance->repository;
  int result = 0;
  {
    absl::StatusOr<std::unique_ptr<registry::lock::LockManager>> manager =
        registry::lock::LockManager::Create(instance->locks);
    if (!manager.ok()) return Fail(manager.status());
    absl::StatusOr<std::shared_ptr<registry::lock::DistributedLock>> lock =
        (*manager)->GetLock(FLAGS_name);
    if (!lock.ok()) return Fail(lock.status());
    for (int round = 0; round < FLAGS_rounds && result == 0; ++round) {
      if (absl::Status status = (*lock)->Lock(); !status.ok()) return Fail(status);
      absl::StatusOr<std::optional<std::string>> value = repository.Get(FLAGS_key);
      int count = 0;
      absl::Status status = value.status();
      if (status.ok() && value->has_value() && !absl::SimpleAtoi(**value, &count)) {
        status = absl::DataLossError(absl::StrCat(FLAGS_key, " holds '", **value, "'"));
      }
      if (status.ok()) {
        status = registry::lock::PersistIfHeld(**lock, FLAGS_key, absl::StrCat(count + 1));
      }
      if (!status.ok()) result = Fail(status);
      if (absl::Status unlocked = (*lock)->Unlock(); !unlocked.ok()) result = Fail(unlocked);
    }
  }
  if (absl::Status closed = repository.Close(); !closed.ok() && result == 0) {
    result = Fail(closed);
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return Run();
}
