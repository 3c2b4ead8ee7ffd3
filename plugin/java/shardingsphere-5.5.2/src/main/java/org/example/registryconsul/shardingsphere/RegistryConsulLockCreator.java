// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import org.apache.shardingsphere.infra.props.TypedProperties;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;
import org.apache.shardingsphere.mode.repository.cluster.lock.creator.DistributedLockCreator;

/**
 * Hands ShardingSphere's lock holder the locks of {@link RegistryConsulRepository}. The holder
 * finds it by {@link #TYPE} (a type of its own, so it never meets another Consul provider's
 * creator) and keeps what it gets per key; it gets the repository's own lock of the key, so a key
 * has one lock however it is reached.
 */
public final class RegistryConsulLockCreator
    implements DistributedLockCreator<AbstractConsulRepository.LockSource, TypedProperties<?>> {
  static final String TYPE = "RegistryConsul";

  @Override
  public DistributedLock create(
      String lockKey, AbstractConsulRepository.LockSource client, TypedProperties<?> props) {
    return client.lock(lockKey);
  }

  @Override
  public Object getType() {
    return TYPE;
  }
}
