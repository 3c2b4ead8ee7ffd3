// Compile-only declaration of ShardingSphere 5.5's ClusterPersistRepository, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
package org.apache.shardingsphere.mode.repository.cluster;

import org.apache.shardingsphere.infra.instance.ComputeNodeInstanceContext;
import org.apache.shardingsphere.mode.repository.cluster.listener.DataChangedEventListener;
import org.apache.shardingsphere.mode.repository.cluster.lock.holder.DistributedLockHolder;
import org.apache.shardingsphere.mode.spi.repository.PersistRepository;

public interface ClusterPersistRepository extends PersistRepository {
  void init(ClusterPersistRepositoryConfiguration config, ComputeNodeInstanceContext context);

  boolean persistExclusiveEphemeral(String key, String value);

  DistributedLockHolder getDistributedLockHolder();

  void watch(String key, DataChangedEventListener listener);

  void removeDataListener(String key);
}
