// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Reads and writes of the repository, as ShardingSphere's ZooKeeper repository behaves. */
@Timeout(60)
class RepositoryContractTest {
  private static String namespace;
  private static ClusterPersistRepository repository;

  @BeforeAll
  static void open() {
    namespace = TestServer.newNamespace(RepositoryContractTest.class);
    repository = TestServer.open(namespace, 3);
  }

  @AfterAll
  static void close() {
    TestServer.closeQuietly(repository);
  }

  @Test
  void queryOfAnAbsentKeyIsNull() {
    assertNull(repository.query("/absent/key"));
    assertFalse(repository.isExisted("/absent/key"));
  }

  @Test
  void persistCreatesAndOverwrites() {
    repository.persist("/persist/a", "one");
    assertEquals("one", repository.query("/persist/a"));
    assertTrue(repository.isExisted("/persist/a"));
    repository.persist("/persist/a", "two");
    assertEquals("two", repository.query("/persist/a"));
  }

  @Test
  void anEmptyValueReadsBackEmptyNotNull() {
    repository.persist("/empty/value", "");
    assertEquals("", repository.query("/empty/value"));
    assertTrue(repository.isExisted("/empty/value"));
  }

  @Test
  void valuesOutsideAsciiRoundTrip() {
    String value = "caf\u00e9 \u20ac \uD83D\uDE00 \u4e2d\u6587";  // a surrogate pair: valid UTF-16
    repository.persist("/unicode/\u00e9t\u00e9", value);
    assertEquals(value, repository.query("/unicode/\u00e9t\u00e9"));
    assertEquals(List.of("\u00e9t\u00e9"), repository.getChildrenKeys("/unicode"));
  }

  @Test
  void updateOverwritesAndIsANoOpOnAnAbsentKey() {
    repository.persist("/update/present", "old");
    repository.update("/update/present", "new");
    assertEquals("new", repository.query("/update/present"));
    repository.update("/update/absent", "value");
    assertNull(repository.query("/update/absent"));
    assertFalse(repository.isExisted("/update/absent"));
  }

  @Test
  void childrenAreDirectNamesDeduplicatedAndSortedAscending() {
    repository.persist("/children/b", "1");
    repository.persist("/children/a/x", "2");
    repository.persist("/children/a/y", "3");
    repository.persist("/children/c/deep/deeper", "4");
    repository.persist("/children/a", "5");
    repository.persist("/childrenSibling/z", "6");
    assertEquals(Arrays.asList("a", "b", "c"), repository.getChildrenKeys("/children"));
    assertEquals(Arrays.asList("x", "y"), repository.getChildrenKeys("/children/a"));
    assertEquals(Collections.emptyList(), repository.getChildrenKeys("/children/absent"));
    assertEquals(Collections.emptyList(), repository.getChildrenKeys("/children/b"));
  }

  @Test
  void deleteIsRecursiveAndSparesSiblingsWithACommonPrefix() {
    repository.persist("/delete/tree", "root");
    repository.persist("/delete/tree/a", "1");
    repository.persist("/delete/tree/a/b", "2");
    repository.persist("/delete/treeSibling", "kept");
    repository.delete("/delete/tree");
    assertNull(repository.query("/delete/tree"));
    assertNull(repository.query("/delete/tree/a"));
    assertNull(repository.query("/delete/tree/a/b"));
    assertEquals(Collections.emptyList(), repository.getChildrenKeys("/delete/tree"));
    assertEquals("kept", repository.query("/delete/treeSibling"));
  }

  @Test
  void deleteOfAnAbsentKeyIsNoError() {
    assertDoesNotThrow(() -> repository.delete("/delete/never/written"));
  }

  @Test
  void anEphemeralKeyIsVisibleToOthersAndGoesAtOnceWhenItsRepositoryCloses() throws Exception {
    // A TTL long enough that "at once" cannot be the session expiring on its own.
    ClusterPersistRepository owner = TestServer.open(namespace, 20);
    ClusterPersistRepository other = TestServer.open(namespace, 3);
    try {
      owner.persistEphemeral("/ephemeral/online", "instance");
      assertEquals("instance", other.query("/ephemeral/online"));
      assertEquals(List.of("online"), other.getChildrenKeys("/ephemeral"));
      String session = "";
      if (AdminConsul.available()) {
        session = AdminConsul.keySession(namespace, "/ephemeral/online");
        assertFalse(session.isEmpty(), "the ephemeral key is held by the instance's session");
      }
      owner.close();
      TestServer.await(Duration.ofSeconds(3), "the ephemeral key gone after close",
          () -> other.query("/ephemeral/online") == null);
      if (!session.isEmpty()) {
        assertFalse(AdminConsul.sessionExists(session), "close ends the session " + session);
      }
    } finally {
      owner.close();  // closing twice is safe
      other.close();
    }
  }

  @Test
  void exclusiveEphemeralIsRefusedWheneverTheKeyExists() {
    ClusterPersistRepository other = TestServer.open(namespace, 3);
    try {
      assertTrue(repository.persistExclusiveEphemeral("/exclusive/leader", "me"));
      assertEquals("me", other.query("/exclusive/leader"));
      assertFalse(repository.persistExclusiveEphemeral("/exclusive/leader", "me again"));
      assertFalse(other.persistExclusiveEphemeral("/exclusive/leader", "other"));
      assertEquals("me", other.query("/exclusive/leader"));
      repository.persist("/exclusive/persistent", "plain");
      assertFalse(other.persistExclusiveEphemeral("/exclusive/persistent", "other"));
      assertEquals("plain", repository.query("/exclusive/persistent"));
      repository.persistEphemeral("/exclusive/ephemeral", "plain ephemeral");
      assertFalse(other.persistExclusiveEphemeral("/exclusive/ephemeral", "other"));
      repository.delete("/exclusive/leader");
      assertTrue(other.persistExclusiveEphemeral("/exclusive/leader", "other"));
      assertEquals("other", repository.query("/exclusive/leader"));
    } finally {
      other.close();
    }
  }

  @Test
  void closeIsSafeTwiceAndEveryCallAfterItThrowsIllegalStateException() {
    ClusterPersistRepository closed = TestServer.open(namespace, 3);
    closed.persist("/closed/key", "value");
    closed.close();
    assertDoesNotThrow(closed::close);
    assertThrows(IllegalStateException.class, () -> closed.query("/closed/key"));
    assertThrows(IllegalStateException.class, () -> closed.getChildrenKeys("/closed"));
    assertThrows(IllegalStateException.class, () -> closed.isExisted("/closed/key"));
    assertThrows(IllegalStateException.class, () -> closed.persist("/closed/key", "v"));
    assertThrows(IllegalStateException.class, () -> closed.update("/closed/key", "v"));
    assertThrows(IllegalStateException.class, () -> closed.delete("/closed/key"));
    assertThrows(IllegalStateException.class, () -> closed.persistEphemeral("/closed/e", "v"));
    assertThrows(
        IllegalStateException.class, () -> closed.persistExclusiveEphemeral("/closed/x", "v"));
    assertThrows(IllegalStateException.class, () -> closed.watch("/closed", event -> {}));
    // Some step of taking a lock must refuse: the holder, the lock or tryLock.
    assertThrows(IllegalStateException.class,
        () -> HostLocks.lock(closed, "/lock/global/locks/closed").tryLock(100));
    assertEquals("value", repository.query("/closed/key"));  // the data outlives the instance
  }

  @Test
  void removeDataListenerAfterCloseThrowsIllegalStateException() {
    ClusterPersistRepository closed = TestServer.open(namespace, 3);
    closed.watch("/closed/watched", event -> {});
    closed.close();
    // Every call after close refuses, this one too: whether the key had listeners or not.
    assertThrows(IllegalStateException.class, () -> closed.removeDataListener("/closed/watched"));
    assertThrows(IllegalStateException.class, () -> closed.removeDataListener("/closed/never"));
  }

  /**
   * ShardingSphere reserves worker ids with exclusive claims as an instance starts, and claims
   * the next free id again at once when refused: a cleanly closed instance's reservation must be
   * free for the next instance at once, as after a ZooKeeper close, not after Consul's 15 s
   * lock-delay (the default this test keeps).
   */
  @Test
  void aClosedInstancesExclusiveKeyIsClaimedAtOnceDespiteTheDefaultLockDelay() {
    java.util.Properties props = TestServer.props(3);
    props.remove("sessionLockDelayMilliseconds");
    ClusterPersistRepository closed = TestServer.open(namespace, props);
    ClusterPersistRepository next = TestServer.open(namespace, props);
    try {
      assertTrue(closed.persistExclusiveEphemeral("/reservation/worker_id/7", "closed"));
      closed.close();
      long start = System.nanoTime();
      assertTrue(next.persistExclusiveEphemeral("/reservation/worker_id/7", "next"));
      long tookMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
      assertTrue(tookMillis < 7500, "the claim took " + tookMillis + " ms: the lock-delay was met");
      assertEquals("next", repository.query("/reservation/worker_id/7"));
    } finally {
      TestServer.closeQuietly(closed);
      TestServer.closeQuietly(next);
    }
  }
}
