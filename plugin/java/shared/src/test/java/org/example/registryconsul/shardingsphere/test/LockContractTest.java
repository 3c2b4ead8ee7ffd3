// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The locks as each version hands them out (HostLocks), within one JVM. */
@Timeout(60)
class LockContractTest {
  private static String namespace;
  private static ClusterPersistRepository repository;
  private ExecutorService otherThread;

  @BeforeAll
  static void open() {
    namespace = TestServer.newNamespace(LockContractTest.class);
    repository = TestServer.open(namespace, 3);
  }

  @AfterAll
  static void close() {
    TestServer.closeQuietly(repository);
  }

  @BeforeEach
  void startOtherThread() {
    otherThread = Executors.newSingleThreadExecutor();
  }

  @AfterEach
  void stopOtherThread() throws InterruptedException {
    otherThread.shutdownNow();
    assertTrue(otherThread.awaitTermination(10, TimeUnit.SECONDS));
  }

  private static DistributedLock lock(ClusterPersistRepository owner, String name) {
    DistributedLock lock = HostLocks.lock(owner, "/lock/global/locks/" + name);
    assertNotNull(lock, name);
    return lock;
  }

  /** Runs `task` on the other thread and returns its result (bounded). */
  private <T> T onOtherThread(java.util.concurrent.Callable<T> task) throws Exception {
    return otherThread.submit(task).get(20, TimeUnit.SECONDS);
  }

  @Test
  void tryLockIsReentrantPerThreadAndExcludesOtherThreads() throws Exception {
    DistributedLock lock = lock(repository, "reentrant");
    assertTrue(lock.tryLock(5000));
    assertTrue(lock.tryLock(5000), "the holding thread takes it again");
    assertFalse(onOtherThread(() -> lock(repository, "reentrant").tryLock(200)));
    lock.unlock();
    assertFalse(onOtherThread(() -> lock(repository, "reentrant").tryLock(200)),
        "held once more: one unlock of two must not release it");
    lock.unlock();
    assertTrue(onOtherThread(() -> {
      DistributedLock other = lock(repository, "reentrant");
      boolean taken = other.tryLock(5000);
      if (taken) {
        other.unlock();
      }
      return taken;
    }));
  }

  @Test
  void tryLockTimesOutWithFalseNotAnException() throws Exception {
    DistributedLock lock = lock(repository, "timeout");
    assertTrue(lock.tryLock(5000));
    try {
      long start = System.nanoTime();
      assertFalse(onOtherThread(() -> lock(repository, "timeout").tryLock(300)));
      long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(waitedMillis >= 250, "gave up after " + waitedMillis + " ms of 300");
      assertFalse(onOtherThread(() -> lock(repository, "timeout").tryLock(0)));
    } finally {
      lock.unlock();
    }
  }

  @Test
  void unlockByAThreadThatDoesNotHoldItIsIllegalMonitorState() throws Exception {
    DistributedLock lock = lock(repository, "monitor");
    assertThrows(IllegalMonitorStateException.class, lock::unlock, "nobody holds it");
    assertTrue(lock.tryLock(5000));
    try {
      Throwable thrown = onOtherThread(() -> {
        try {
          lock.unlock();
          return null;
        } catch (Throwable t) {
          return t;
        }
      });
      assertTrue(thrown instanceof IllegalMonitorStateException, String.valueOf(thrown));
      assertFalse(onOtherThread(() -> lock(repository, "monitor").tryLock(100)),
          "the failed unlock must not have released it");
    } finally {
      lock.unlock();
    }
  }

  @Test
  void anotherRepositoryWaitsForTheHolderAndGetsTheLockOnRelease() throws Exception {
    ClusterPersistRepository other = TestServer.open(namespace, 3);
    try {
      DistributedLock mine = lock(repository, "instances");
      assertTrue(mine.tryLock(5000));
      assertFalse(onOtherThread(() -> lock(other, "instances").tryLock(300)));
      CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
        DistributedLock theirs = lock(other, "instances");
        boolean taken = theirs.tryLock(10000);
        if (taken) {
          theirs.unlock();
        }
        return taken;
      }, otherThread);
      mine.unlock();
      assertTrue(waiting.get(20, TimeUnit.SECONDS), "the waiter takes the released lock");
    } finally {
      other.close();
    }
  }

  /** A key's lock is one object for the repository's life, as both versions' callers expect. */
  @Test
  void oneKeyGivesOneLock() {
    assertSame(lock(repository, "same"), lock(repository, "same"));
  }

  @Test
  void locksOfDifferentNamesAreIndependent() throws Exception {
    DistributedLock first = lock(repository, "first");
    assertTrue(first.tryLock(5000));
    try {
      assertTrue(onOtherThread(() -> {
        DistributedLock second = lock(repository, "second");
        boolean taken = second.tryLock(5000);
        if (taken) {
          second.unlock();
        }
        return taken;
      }));
    } finally {
      first.unlock();
    }
  }
}
