// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import org.apache.shardingsphere.mode.node.path.metadata.ComputeNodePath;
import org.apache.shardingsphere.mode.node.path.metadata.ReservationNodePath;

/**
 * Where ShardingSphere 5.5.2 keeps worker ids. Kept out of the repository classes: they are
 * constructed in every ShardingSphere the jar is put into (its loader constructs every
 * provider), and verifying code that hands these classes around would load them, breaking the
 * loading of every repository type in a ShardingSphere that lacks them. This class is loaded only
 * once the repository started, so only in the version it serves.
 */
final class WorkerIdNodes {
  private WorkerIdNodes() {}

  /** The record of {@code instanceId}'s worker id. */
  static String record(String instanceId) {
    return ComputeNodePath.getWorkerIdPath(instanceId);
  }

  /** The reservation of {@code workerId}. */
  static String reservation(int workerId) {
    return ReservationNodePath.getWorkerIdReservationPath(workerId);
  }
}
