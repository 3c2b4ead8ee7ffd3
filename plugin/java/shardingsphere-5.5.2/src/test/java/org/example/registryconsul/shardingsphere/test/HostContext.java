package org.example.registryconsul.shardingsphere.test;

import org.apache.shardingsphere.infra.config.mode.ModeConfiguration;
import org.apache.shardingsphere.infra.instance.ComputeNodeInstance;
import org.apache.shardingsphere.infra.instance.ComputeNodeInstanceContext;
import org.apache.shardingsphere.infra.instance.metadata.proxy.ProxyInstanceMetaData;
import org.apache.shardingsphere.infra.util.eventbus.EventBusContext;
import org.apache.shardingsphere.mode.manager.cluster.workerid.ClusterWorkerIdGenerator;
import org.apache.shardingsphere.mode.node.path.metadata.ComputeNodePath;
import org.apache.shardingsphere.mode.node.path.metadata.ReservationNodePath;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;

/**
 * A compute node's instance context as ShardingSphere 5.5.2 builds one in cluster mode, with its
 * real worker id generator (shardingsphere-cluster-mode-core), and its node paths.
 */
final class HostContext {
  private HostContext() {}

  /** The context of a Proxy instance `instanceId`, before the repository exists. */
  static ComputeNodeInstanceContext newContext(String instanceId) {
    return new ComputeNodeInstanceContext(
        new ComputeNodeInstance(new ProxyInstanceMetaData(instanceId, 3307)),
        new ModeConfiguration("Cluster", null), new EventBusContext());
  }

  /** Gives `context` the generator ShardingSphere gives it once `repository` is initialised. */
  static void initWorkerIds(ComputeNodeInstanceContext context, ClusterPersistRepository repository) {
    context.init(
        new ClusterWorkerIdGenerator(repository, context.getInstance().getMetaData().getId()),
        null);
  }

  static String workerIdPath(String instanceId) {
    return ComputeNodePath.getWorkerIdPath(instanceId);
  }

  static String reservationPath(int workerId) {
    return ReservationNodePath.getWorkerIdReservationPath(workerId);
  }
}
