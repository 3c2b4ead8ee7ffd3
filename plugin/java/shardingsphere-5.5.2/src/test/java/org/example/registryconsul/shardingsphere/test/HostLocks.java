// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

/** How ShardingSphere 5.5.2 takes a lock: through the repository's lock holder. */
final class HostLocks {
  private HostLocks() {}

  static DistributedLock lock(ClusterPersistRepository repository, String lockKey) {
    return repository.getDistributedLockHolder().getDistributedLock(lockKey);
  }
}
