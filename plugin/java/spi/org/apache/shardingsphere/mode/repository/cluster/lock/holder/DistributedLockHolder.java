// Compile-only declaration of ShardingSphere 5.5's DistributedLockHolder, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
// Its body mimics the real one for the tests: the creator found by type, one lock per key.
package org.apache.shardingsphere.mode.repository.cluster.lock.holder;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.shardingsphere.infra.props.TypedProperties;
import org.apache.shardingsphere.infra.spi.type.typed.TypedSPILoader;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;
import org.apache.shardingsphere.mode.repository.cluster.lock.creator.DistributedLockCreator;

public final class DistributedLockHolder {
  @SuppressWarnings("rawtypes")
  private final DistributedLockCreator creator;

  private final Object client;
  private final TypedProperties<?> props;
  private final Map<String, DistributedLock> locks = new ConcurrentHashMap<>();

  public DistributedLockHolder(String type, Object client, TypedProperties<?> props) {
    this.creator = TypedSPILoader.getService(DistributedLockCreator.class, type);
    this.client = client;
    this.props = props;
  }

  @SuppressWarnings("unchecked")
  public synchronized DistributedLock getDistributedLock(String lockKey) {
    return locks.computeIfAbsent(lockKey, key -> creator.create(key, client, props));
  }
}
