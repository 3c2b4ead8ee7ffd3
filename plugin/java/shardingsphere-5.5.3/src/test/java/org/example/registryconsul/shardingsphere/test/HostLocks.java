// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

/**
 * How ShardingSphere 5.5.3 takes a lock: {@code getDistributedLock}, whose empty answer would
 * send it to its polling default lock (so an empty answer fails here).
 */
final class HostLocks {
  private HostLocks() {}

  static DistributedLock lock(ClusterPersistRepository repository, String lockKey) {
    return repository.getDistributedLock(lockKey).orElseThrow(
        () -> new AssertionError("getDistributedLock(" + lockKey + ") is empty"));
  }
}
