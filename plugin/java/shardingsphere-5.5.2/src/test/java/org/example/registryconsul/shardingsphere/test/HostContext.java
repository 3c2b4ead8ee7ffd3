// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import org.apache.shardingsphere.infra.instance.ComputeNodeInstanceContext;
import org.apache.shardingsphere.mode.manager.cluster.workerid.ClusterWorkerIdGenerator;
import org.apache.shardingsphere.mode.node.path.metadata.ComputeNodePath;
import org.apache.shardingsphere.mode.node.path.metadata.ReservationNodePath;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;

/**
 * What ShardingSphere 5.5.2 gives an instance context in cluster mode: its real worker id
 * generator (shardingsphere-cluster-mode-core); and 5.5.2's node paths.
 */
final class HostContext {
  private HostContext() {}

  /** Gives `context` the generator ShardingSphere gives it once `repository` is initialised. */
  static void initWorkerIds(
      ComputeNodeInstanceContext context, ClusterPersistRepository repository) {
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
