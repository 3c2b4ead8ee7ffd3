// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.Properties;
import org.apache.shardingsphere.infra.instance.ComputeNodeInstanceContext;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A ShardingSphere instance whose Consul session is invalidated from outside comes back on its
 * own, as with ShardingSphere's ZooKeeper repository: online again, and with a worker id no other
 * live instance holds, even when another instance reserved its old id while its session was gone.
 */
@Timeout(120)
class SessionLossTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private static final String ONLINE = "/nodes/compute_nodes/online/proxy/";
  private final String namespace = TestServer.newNamespace(SessionLossTest.class);

  @Test
  void anInstanceWhoseSessionWasLostIsOnlineAgainWithAWorkerIdNoOtherInstanceHolds()
      throws Exception {
    assumeTrue(AdminConsul.available(), "the test ends the session itself over plain HTTP");
    ComputeNodeInstanceContext lostContext = TestServer.newInstanceContext("lost");
    ComputeNodeInstanceContext otherContext = TestServer.newInstanceContext("other");
    Properties props = TestServer.props(3);
    ClusterPersistRepository lost = TestServer.open(namespace, props, lostContext);
    ClusterPersistRepository other = TestServer.open(namespace, props, otherContext);
    try {
      HostContext.initWorkerIds(lostContext, lost);
      HostContext.initWorkerIds(otherContext, other);
      lost.persistEphemeral(ONLINE + "lost", "{}");
      int oldWorkerId = lostContext.generateWorkerId(new Properties());
      int takenBy = -1;
      // Consul ends the session; the other instance, starting now, reserves the freed id before
      // the lost one notices (its next renewal is up to half a TTL away). Should the lost one
      // win that race and take its keys back, the scenario is tried again.
      for (int attempt = 0; attempt < 3 && takenBy < 0; attempt++) {
        AdminConsul.destroySession(AdminConsul.keySession(namespace, ONLINE + "lost"));
        if (other.persistExclusiveEphemeral(HostContext.reservationPath(oldWorkerId), "other")) {
          other.persistEphemeral(HostContext.workerIdPath("other"), String.valueOf(oldWorkerId));
          takenBy = oldWorkerId;
        } else {
          awaitOnline(lost);
        }
      }
      assertEquals(oldWorkerId, takenBy, "the other instance reserved the lost one's worker id");

      TestServer.await(PATIENCE, "a new worker id for the instance whose session was lost",
          () -> lostContext.getWorkerId() != oldWorkerId);
      int newWorkerId = lostContext.getWorkerId();
      assertNotEquals(oldWorkerId, newWorkerId);
      assertEquals("lost", other.query(HostContext.reservationPath(newWorkerId)));
      assertEquals(String.valueOf(newWorkerId), other.query(HostContext.workerIdPath("lost")));
      assertEquals("other", other.query(HostContext.reservationPath(oldWorkerId)));
      awaitOnline(lost);
    } finally {
      TestServer.closeQuietly(lost);
      TestServer.closeQuietly(other);
    }
  }

  @Test
  void anInstanceWhoseSessionWasLostKeepsItsWorkerIdWhenNobodyTookIt() throws Exception {
    assumeTrue(AdminConsul.available(), "the test ends the session itself over plain HTTP");
    ComputeNodeInstanceContext context = TestServer.newInstanceContext("alone");
    ClusterPersistRepository repository =
        TestServer.open(namespace, TestServer.props(3), context);
    try {
      HostContext.initWorkerIds(context, repository);
      repository.persistEphemeral(ONLINE + "alone", "{}");
      int workerId = context.generateWorkerId(new Properties());
      String oldSession = AdminConsul.keySession(namespace, ONLINE + "alone");
      AdminConsul.destroySession(oldSession);
      TestServer.await(PATIENCE, "the online key bound to a new session", () -> {
        String session = sessionOf(ONLINE + "alone");
        return !session.isEmpty() && !session.equals(oldSession);
      });
      TestServer.await(PATIENCE, "the reservation taken back",
          () -> "alone".equals(repository.query(HostContext.reservationPath(workerId))));
      assertEquals(workerId, context.getWorkerId());
      assertEquals(String.valueOf(workerId), repository.query(HostContext.workerIdPath("alone")));
    } finally {
      TestServer.closeQuietly(repository);
    }
  }

  /** Waits until `repository`'s online key is bound to a live session again. */
  private void awaitOnline(ClusterPersistRepository repository) throws InterruptedException {
    TestServer.await(PATIENCE, "the online key of the lost instance back", () -> {
      String session = sessionOf(ONLINE + "lost");
      return !session.isEmpty() && sessionExists(session);
    });
    assertFalse(repository.getChildrenKeys("/nodes/compute_nodes/online/proxy").isEmpty());
    assertTrue(repository.isExisted(ONLINE + "lost"));
  }

  private String sessionOf(String key) {
    try {
      return AdminConsul.keySession(namespace, key);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static boolean sessionExists(String id) {
    try {
      return AdminConsul.sessionExists(id);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
