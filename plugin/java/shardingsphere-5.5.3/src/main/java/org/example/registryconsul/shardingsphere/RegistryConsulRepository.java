package org.example.registryconsul.shardingsphere;

import java.util.Optional;
import org.apache.shardingsphere.mode.node.path.engine.generator.NodePathGenerator;
import org.apache.shardingsphere.mode.node.path.type.global.node.compute.workerid.ComputeNodeWorkerIDNodePath;
import org.apache.shardingsphere.mode.node.path.type.global.reservation.WorkerIDReservationNodePath;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

/**
 * ShardingSphere 5.5.3's cluster repository of {@code type: Consul} (see {@link
 * AbstractConsulRepository} for its semantics).
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

  @Override
  protected String workerIdPath(String instanceId) {
    return NodePathGenerator.toPath(new ComputeNodeWorkerIDNodePath(instanceId));
  }

  @Override
  protected String workerIdReservationPath(int workerId) {
    return NodePathGenerator.toPath(new WorkerIDReservationNodePath(workerId));
  }
}
