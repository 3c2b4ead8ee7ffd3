// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.util.HashSet;
import java.util.Set;
import org.apache.shardingsphere.infra.instance.ComputeNodeInstanceContext;
import org.apache.shardingsphere.infra.instance.workerid.WorkerIdGenerator;
import org.apache.shardingsphere.mode.node.path.engine.generator.NodePathGenerator;
import org.apache.shardingsphere.mode.node.path.type.global.node.compute.workerid.ComputeNodeWorkerIDNodePath;
import org.apache.shardingsphere.mode.node.path.type.global.reservation.WorkerIDReservationNodePath;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;

/**
 * What ShardingSphere 5.5.3 gives an instance context in cluster mode, and 5.5.3's node paths.
 * 5.5.3's cluster worker id generator (in its cluster mode core) is not on Maven Central, so the
 * generator here does what 5.5.2's does, on 5.5.3's paths: an instance keeps the id its record
 * names; otherwise it reserves the smallest id no record names, by an exclusive ephemeral key, and
 * records it.
 */
final class HostContext {
  private HostContext() {}

  /** Gives `context` its worker id generator once `repository` is initialised. */
  static void initWorkerIds(
      ComputeNodeInstanceContext context, ClusterPersistRepository repository) {
    String instanceId = context.getInstance().getMetaData().getId();
    context.init(props -> workerIdOf(repository, instanceId));
  }

  private static int workerIdOf(ClusterPersistRepository repository, String instanceId) {
    String recorded = repository.query(workerIdPath(instanceId));
    if (recorded != null && !recorded.isEmpty()) {
      return Integer.parseInt(recorded);
    }
    String any = workerIdPath("any");
    String root = any.substring(0, any.lastIndexOf('/'));
    for (int attempt = 0; attempt <= WorkerIdGenerator.MAX_WORKER_ID; attempt++) {
      Set<Integer> assigned = new HashSet<>();
      for (String each : repository.getChildrenKeys(root)) {
        String value = repository.query(workerIdPath(each));
        if (value != null && !value.isEmpty()) {
          assigned.add(Integer.parseInt(value));
        }
      }
      int candidate = 0;
      while (assigned.contains(candidate)) {
        candidate++;
      }
      if (repository.persistExclusiveEphemeral(reservationPath(candidate), instanceId)) {
        repository.persistEphemeral(workerIdPath(instanceId), String.valueOf(candidate));
        return candidate;
      }
    }
    throw new IllegalStateException("no worker id left for " + instanceId);
  }

  static String workerIdPath(String instanceId) {
    return NodePathGenerator.toPath(new ComputeNodeWorkerIDNodePath(instanceId));
  }

  static String reservationPath(int workerId) {
    return NodePathGenerator.toPath(new WorkerIDReservationNodePath(workerId));
  }
}
