// Compile-only declaration of ShardingSphere 5.5's DistributedLockCreator, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
// ShardingSphere marks it @SingletonSPI: one instance per type, shared by every holder.
package org.apache.shardingsphere.mode.repository.cluster.lock.creator;

import org.apache.shardingsphere.infra.props.TypedProperties;
import org.apache.shardingsphere.infra.spi.type.typed.TypedSPI;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

public interface DistributedLockCreator<C, P extends TypedProperties<?>> extends TypedSPI {
  DistributedLock create(String lockKey, C client, P props);
}
