// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import org.apache.shardingsphere.mode.event.DataChangedEvent;
import org.apache.shardingsphere.mode.event.DataChangedEvent.Type;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** watch / removeDataListener: what ShardingSphere's listeners get, and on which threads. */
@Timeout(60)
class WatchContractTest {
  private static final Duration EVENT_WAIT = Duration.ofSeconds(10);
  private static final String CLOSE_WAIT_PROPERTY =
      "org.example.registryconsul.shardingsphere.closeWaitMillis";

  private static ClusterPersistRepository repository;

  @BeforeAll
  static void open() {
    repository = TestServer.open(TestServer.newNamespace(WatchContractTest.class), 3);
  }

  @AfterAll
  static void close() {
    TestServer.closeQuietly(repository);
  }

  private static void assertEvent(Type type, String key, String value, DataChangedEvent event) {
    assertEquals(type + " " + key + "=" + value, EventRecorder.describe(event));
  }

  @Test
  void addedUpdatedDeletedForTheKeyAndItsSubtreeWithKeysAsWritten() throws Exception {
    EventRecorder events = new EventRecorder();
    repository.watch("/watched", events);
    repository.persist("/watched/a", "1");
    assertEvent(Type.ADDED, "/watched/a", "1", events.next(EVENT_WAIT));
    repository.persist("/watched/a", "2");
    assertEvent(Type.UPDATED, "/watched/a", "2", events.next(EVENT_WAIT));
    repository.persist("/watched", "root");
    assertEvent(Type.ADDED, "/watched", "root", events.next(EVENT_WAIT));
    repository.persist("/watched/b/c", "deep");
    assertEvent(Type.ADDED, "/watched/b/c", "deep", events.next(EVENT_WAIT));
    repository.delete("/watched/a");
    assertEvent(Type.DELETED, "/watched/a", "2", events.next(EVENT_WAIT));
    // A sibling sharing the prefix is outside the subtree: the next event is the marker's.
    repository.persist("/watchedSibling", "outside");
    repository.persist("/watched/marker", "m");
    assertEvent(Type.ADDED, "/watched/marker", "m", events.next(EVENT_WAIT));
    repository.removeDataListener("/watched");
  }

  @Test
  void aRecursiveDeleteReportsEveryKeyWithItsLastValue() throws Exception {
    repository.persist("/tree/x", "1");
    repository.persist("/tree/y/z", "2");
    EventRecorder events = new EventRecorder();
    repository.watch("/tree", events);
    repository.persist("/tree/x", "1b");
    assertEvent(Type.UPDATED, "/tree/x", "1b", events.next(EVENT_WAIT));
    repository.delete("/tree");
    List<String> deleted = new ArrayList<>();
    deleted.add(EventRecorder.describe(events.next(EVENT_WAIT)));
    deleted.add(EventRecorder.describe(events.next(EVENT_WAIT)));
    deleted.sort(null);
    assertEquals(List.of("DELETED /tree/x=1b", "DELETED /tree/y/z=2"), deleted);
    repository.removeDataListener("/tree");
  }

  @Test
  void aSecondWatchOfTheSameKeyAddsASecondListener() throws Exception {
    EventRecorder first = new EventRecorder();
    EventRecorder second = new EventRecorder();
    repository.watch("/twice", first);
    repository.watch("/twice", second);
    repository.persist("/twice/k", "v");
    assertEvent(Type.ADDED, "/twice/k", "v", first.next(EVENT_WAIT));
    assertEvent(Type.ADDED, "/twice/k", "v", second.next(EVENT_WAIT));
    repository.removeDataListener("/twice");
  }

  @Test
  void removeDataListenerStopsEveryListenerOfTheKeyAndNoCallStartsAfterItReturns()
      throws Exception {
    // A slow listener, so that removal happens while a call is running.
    CountDownLatch slowEntered = new CountDownLatch(1);
    AtomicInteger slowCalls = new AtomicInteger();
    repository.watch("/removed", event -> {
      slowCalls.incrementAndGet();
      slowEntered.countDown();
      try {
        Thread.sleep(300);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    EventRecorder other = new EventRecorder();
    repository.watch("/removed", other);
    // A witness on another key of the same subtree, which removal must leave alone.
    EventRecorder witness = new EventRecorder();
    repository.watch("/removed/k", witness);
    repository.persist("/removed/k", "1");
    assertTrue(slowEntered.await(EVENT_WAIT.toMillis(), TimeUnit.MILLISECONDS));
    repository.persist("/removed/k", "2");  // queued behind the slow call, or not yet seen
    repository.removeDataListener("/removed");
    int slowAfterRemoval = slowCalls.get();
    int otherAfterRemoval = other.calls();
    repository.persist("/removed/k", "3");
    repository.persist("/removed/k", "4");
    // The witness sees every write up to the last: the removed listeners had their chance.
    List<String> seen = new ArrayList<>();
    while (!seen.contains("UPDATED /removed/k=4")) {
      seen.add(EventRecorder.describe(witness.next(EVENT_WAIT)));
    }
    assertEquals(slowAfterRemoval, slowCalls.get(), "a call started after removal returned");
    assertEquals(otherAfterRemoval, other.calls(), "a call started after removal returned");
    repository.removeDataListener("/removed/k");
  }

  @Test
  void aListenerThatThrowsIsLoggedAndTheWatchGoesOn() throws Exception {
    LogCapture log = new LogCapture();
    EventRecorder events = new EventRecorder();
    AtomicInteger thrown = new AtomicInteger();
    repository.watch("/throwing", event -> {
      thrown.incrementAndGet();  // before the event is seen, so the count is final
      events.onChange(event);
      throw new IllegalStateException("a listener's own failure (expected by the test)");
    });
    repository.persist("/throwing/a", "1");
    assertEvent(Type.ADDED, "/throwing/a", "1", events.next(EVENT_WAIT));
    repository.persist("/throwing/b", "2");
    assertEvent(Type.ADDED, "/throwing/b", "2", events.next(EVENT_WAIT));
    assertEquals(2, thrown.get());
    repository.removeDataListener("/throwing");
    try (log) {
      assertTrue(log.logged(Level.WARNING, "a listener's own failure"),
          "the listener's exception is logged:\n" + log.describe());
    }
  }

  @Test
  void listenersRunOnDaemonThreadsNamedRegistryConsul() throws Exception {
    EventRecorder events = new EventRecorder();
    repository.watch("/threads", events);
    repository.persist("/threads/a", "1");
    events.next(EVENT_WAIT);
    repository.removeDataListener("/threads");
    for (Thread each : events.callingThreads()) {
      assertTrue(each.isDaemon(), each.getName() + " is not a daemon");
      assertTrue(each.getName().startsWith("registry-consul-"), each.getName());
      assertTrue(each != Thread.currentThread());
    }
  }

  @Test
  void aThousandWatchAndRemoveCyclesLeaveNoThreadsNorGlobalReferencesBehind() throws Exception {
    // One cycle first, so that threads started once per process are in the baseline.
    repository.watch("/cycles/warmup", event -> {});
    repository.removeDataListener("/cycles/warmup");
    int baseline = TestServer.liveThreads();
    long baselineRefs = liveGlobalRefs();
    for (int i = 0; i < 1000; i++) {
      String key = "/cycles/" + (i % 10);
      repository.watch(key, event -> {});
      assertEquals(baselineRefs + 1, liveGlobalRefs(), "a watch holds one global reference");
      repository.removeDataListener(key);
    }
    assertEquals(baselineRefs, liveGlobalRefs(), "global references left behind by the cycles");
    // The watch still works after the cycles.
    EventRecorder events = new EventRecorder();
    repository.watch("/cycles/3", events);
    repository.persist("/cycles/3", "after");
    assertEvent(Type.ADDED, "/cycles/3", "after", events.next(EVENT_WAIT));
    repository.removeDataListener("/cycles/3");
    TestServer.awaitThreadsAtMost(baseline, Duration.ofSeconds(10));
  }

  @Test
  void closeReturnsWithinItsBoundWhileAListenerNeverReturns() throws Exception {
    ClusterPersistRepository stuck =
        TestServer.open(TestServer.newNamespace(WatchContractTest.class), 3);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    stuck.watch("/stuck", event -> {
      entered.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    stuck.persist("/stuck/a", "1");
    assertTrue(entered.await(EVENT_WAIT.toMillis(), TimeUnit.MILLISECONDS), "no event");
    String previous = System.setProperty(CLOSE_WAIT_PROPERTY, "500");
    try {
      long start = System.nanoTime();
      stuck.close();
      long tookMillis = (System.nanoTime() - start) / 1_000_000;
      assertTrue(tookMillis >= 450 && tookMillis < 5000, "close took " + tookMillis + " ms");
      assertThrows(IllegalStateException.class, () -> stuck.query("/stuck/a"));
    } finally {
      restore(CLOSE_WAIT_PROPERTY, previous);
      release.countDown(); // the closer thread then finishes
    }
  }

  private static void restore(String property, String previous) {
    if (previous == null) {
      System.clearProperty(property);
    } else {
      System.setProperty(property, previous);
    }
  }

  // The glue's count of its per-watch JNI global references (package-private in the bridge).
  private static long liveGlobalRefs() throws Exception {
    Method count =
        Class.forName("org.example.registryconsul.shardingsphere.NativeRepository")
            .getDeclaredMethod("liveGlobalRefs");
    count.setAccessible(true);
    return (Long) count.invoke(null);
  }
}
