// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import org.apache.shardingsphere.infra.props.TypedProperties;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;
import org.apache.shardingsphere.mode.repository.cluster.lock.creator.DistributedLockCreator;

/**
 * Makes the locks of {@link RegistryConsulRepository}'s lock holder. ShardingSphere's holder finds
 * it by {@link #TYPE} (a type of its own, so it never meets another Consul provider's creator)
 * and caches one lock per key.
 */
public final class RegistryConsulLockCreator
    implements DistributedLockCreator<AbstractConsulRepository.LockSource, TypedProperties<?>> {
  static final String TYPE = "RegistryConsul";

  @Override
  public DistributedLock create(
      String lockKey, AbstractConsulRepository.LockSource client, TypedProperties<?> props) {
    return new RegistryConsulLock(lockKey, client);
  }

  @Override
  public Object getType() {
    return TYPE;
  }
}
