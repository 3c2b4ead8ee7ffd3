// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import org.apache.shardingsphere.mode.repository.cluster.lock.holder.DistributedLockHolder;

/**
 * ShardingSphere 5.5.2's cluster repository of {@code type: Consul} (see {@link
 * AbstractConsulRepository} for its semantics). Constructed in whatever ShardingSphere the jar is
 * put into, so its code hands around no ShardingSphere type another version may lack (see {@link
 * WorkerIdNodes}); HostVersionTest constructs it in the other version.
 */
public final class RegistryConsulRepository extends AbstractConsulRepository {
  private DistributedLockHolder lockHolder; // guarded by this

  /**
   * ShardingSphere's own holder, which finds {@link RegistryConsulLockCreator} by its type and
   * caches one lock per key: the plugin's two-tier re-entrant lock.
   */
  @Override
  public synchronized DistributedLockHolder getDistributedLockHolder() {
    if (lockHolder == null) {
      lockHolder = new DistributedLockHolder(RegistryConsulLockCreator.TYPE, lockSource(), null);
    }
    return lockHolder;
  }
}
