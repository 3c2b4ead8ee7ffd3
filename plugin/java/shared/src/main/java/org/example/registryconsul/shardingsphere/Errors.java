// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import org.apache.shardingsphere.mode.repository.cluster.exception.ClusterRepositoryPersistException;

/** The one mapping of plugin failures onto the exceptions ShardingSphere expects. */
final class Errors {
  private Errors() {}

  /**
   * A bad key, value or prop is the caller's error: {@link IllegalArgumentException} with the
   * plugin's message. Anything else (Consul unreachable, ACL denied, ...) is a {@link
   * ClusterRepositoryPersistException} caused by the plugin's status.
   */
  static RuntimeException of(NativeStatusException failure) {
    if (failure.getCode() == NativeStatusException.INVALID_ARGUMENT) {
      return new IllegalArgumentException(failure.getMessage(), failure);
    }
    return PersistFailure.of(failure);
  }

  /**
   * Kept apart so that ShardingSphere's exception class (and the exception hierarchy of its infra
   * modules behind it) is loaded on the first failure, not by the verifier on the first call:
   * the classes of {@link Errors} and of every call site name only {@link RuntimeException}.
   */
  private static final class PersistFailure {
    static RuntimeException of(NativeStatusException failure) {
      return new ClusterRepositoryPersistException(failure);
    }
  }
}
