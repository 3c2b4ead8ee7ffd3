// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.util.Optional;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

/**
 * ShardingSphere 5.5.3's cluster repository of {@code type: Consul} (see {@link
 * AbstractConsulRepository} for its semantics). Constructed in whatever ShardingSphere the jar is
 * put into, so its code hands around no ShardingSphere type another version may lack (see {@link
 * WorkerIdNodes}); HostVersionTest constructs it in the other version.
 */
public final class RegistryConsulRepository extends AbstractConsulRepository {
  /**
   * The plugin's two-tier re-entrant lock of {@code lockKey}, one per key. Never empty: with an
   * empty answer ShardingSphere would fall back to its default lock, which polls {@link
   * #persistExclusiveEphemeral} every 100 ms.
   */
  @Override
  public Optional<DistributedLock> getDistributedLock(String lockKey) {
    return Optional.of(lockOf(lockKey));
  }
}
