// SPDX-License-Identifier: Apache-2.0
// plugin/java/native/bridge_repository.h
//
// What one Java repository owns on the native side: a repository of the Consul plugin, loaded
// through the C ABI like every other host (host/loader.h, host/plugin_client.h), and the
// lock handles its DistributedLocks use. The JNI entry points (jni_exports.cc) translate Java
// calls into calls on it; it knows nothing of JNI.
//
// Finding the plugin: libregistry_consul.so is looked for in the directory this glue library
// was loaded from (where the jar extracts both, and where the install tree puts both), then in
// the directories the JVM passes (java.library.path), then in the loader's default path
// (REGISTRY_PLUGIN_PATH). The library is loaded once per process and kept.
//
// Thread safety: every method may be called concurrently; destruction must not race with them
// (the Java side counts its calls in flight and destroys only when none is left).
#ifndef PLUGIN_JAVA_NATIVE_BRIDGE_REPOSITORY_H_
#define PLUGIN_JAVA_NATIVE_BRIDGE_REPOSITORY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "host/plugin_client.h"

namespace registry::java {

class BridgeRepository {
 public:
  // Loads the plugin (once per process; see above, `extra_dirs` after the glue's own directory)
  // and creates a repository from `props`. Errors: the loader's (NotFound naming every directory
  // searched) and the plugin's (InvalidArgument naming the prop and its value).
  static absl::StatusOr<std::unique_ptr<BridgeRepository>> Open(
      const plugin::PropList& props, const std::vector<std::string>& extra_dirs);

  // Releases the lock handles, then destroys the repository: its session ends and no listener
  // runs after this returns.
  ~BridgeRepository();

  plugin::PluginRepository& repository() { return *repository_; }

  // The lock named `name`, made on first use and kept until destruction: a DistributedLock of
  // ShardingSphere is cached per key for the repository's life anyway. Errors: get_lock's.
  absl::StatusOr<plugin::PluginLock*> Lock(absl::string_view name);

 private:
  explicit BridgeRepository(std::unique_ptr<plugin::PluginRepository> repository)
      : repository_(std::move(repository)) {}

  const std::unique_ptr<plugin::PluginRepository> repository_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<plugin::PluginLock>, std::less<>> locks_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::java

#endif  // PLUGIN_JAVA_NATIVE_BRIDGE_REPOSITORY_H_
