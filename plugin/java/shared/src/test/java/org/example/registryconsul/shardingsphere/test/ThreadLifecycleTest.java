// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** close() stops every thread the repository started: ShardingSphere restarts do not leak. */
@Timeout(60)
class ThreadLifecycleTest {
  private final String namespace = TestServer.newNamespace(ThreadLifecycleTest.class);

  /**
   * Uses every part that may start a thread: session, watches, listener calls, a lock. Returns
   * the threads that called the listeners.
   */
  private List<Thread> exercise(ClusterPersistRepository repository, int round) throws Exception {
    String root = "/life/" + round;  // new keys each round: every watch sees an ADDED
    repository.persist(root + "/a", "1");
    repository.persistEphemeral(root + "/online", "me");
    EventRecorder first = new EventRecorder();
    EventRecorder second = new EventRecorder();
    repository.watch(root, first);
    repository.watch(root + "/b", second);
    repository.persist(root + "/b", "2");
    first.next(Duration.ofSeconds(10));
    second.next(Duration.ofSeconds(10));
    DistributedLock lock = HostLocks.lock(repository, "/lock/global/locks/life");
    assertTrue(lock.tryLock(5000));
    lock.unlock();
    List<Thread> listenerThreads = new ArrayList<>(first.callingThreads());
    listenerThreads.addAll(second.callingThreads());
    return listenerThreads;
  }

  @Test
  void liveThreadsComeBackToTheirStartAfterClose() throws Exception {
    // Counted before any repository of this JVM: close must stop every thread it started,
    // including threads the first one started for the whole process.
    int baseline = TestServer.liveThreads();
    for (int round = 0; round < 3; round++) {
      ClusterPersistRepository repository = TestServer.open(namespace, 3);
      List<Thread> listenerThreads = exercise(repository, round);
      repository.close();
      TestServer.awaitThreadsAtMost(baseline, Duration.ofSeconds(10));
      for (Thread each : listenerThreads) {
        assertFalse(each.isAlive(), each.getName() + " outlived close");
      }
    }
  }

  @Test
  void closeWithWatchesStillRegisteredStopsTheirThreads() throws Exception {
    int baseline = TestServer.liveThreads();
    ClusterPersistRepository repository = TestServer.open(namespace, 3);
    for (int i = 0; i < 20; i++) {
      repository.watch("/open/" + i, event -> {});
    }
    repository.close();
    TestServer.awaitThreadsAtMost(baseline, Duration.ofSeconds(10));
  }
}
