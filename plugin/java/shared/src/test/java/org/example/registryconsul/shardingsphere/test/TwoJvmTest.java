// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Two compute nodes in two JVMs, as ShardingSphere runs them: exclusivity, locks, crashes. */
@Timeout(90)
class TwoJvmTest {
  private static final Duration WORKER_WAIT = Duration.ofSeconds(20);
  private static final int KILLED_TTL_SECONDS = 2;

  private static String namespace;
  private static ClusterPersistRepository repository;

  @BeforeAll
  static void open() {
    namespace = TestServer.newNamespace(TwoJvmTest.class);
    repository = TestServer.open(namespace, 3);
  }

  @AfterAll
  static void close() {
    TestServer.closeQuietly(repository);
  }

  @Test
  void anExclusiveEphemeralHeldByAnotherJvmIsRefusedUntilThatJvmCloses() throws Exception {
    String key = "/nodes/leader";
    try (WorkerProcess holder = new WorkerProcess("hold", namespace, "3", key, "jvm-a", "exclusive");
         WorkerProcess rival =
             new WorkerProcess("hold", namespace, "3", key, "jvm-b", "exclusive")) {
      // Both race for the key: exactly one wins.
      List<String> answers = List.of(holder.next(WORKER_WAIT), rival.next(WORKER_WAIT));
      assertTrue(answers.contains("exclusive true") && answers.contains("exclusive false"),
          "one winner: " + answers + "\n" + holder.output() + rival.output());
      WorkerProcess winner = answers.get(0).equals("exclusive true") ? holder : rival;
      WorkerProcess loser = winner == holder ? rival : holder;
      String winnerValue = winner == holder ? "jvm-a" : "jvm-b";
      assertEquals(winnerValue, repository.query(key));
      assertFalse(repository.persistExclusiveEphemeral(key, "this-jvm"));
      loser.closeStdin();
      assertEquals("closed", loser.next(WORKER_WAIT));
      assertEquals(winnerValue, repository.query(key), "the loser's close took the winner's key");
      winner.closeStdin();
      assertEquals("closed", winner.next(WORKER_WAIT));
      // Closing ends the session: the key goes at once, well inside the 3 s TTL.
      TestServer.await(Duration.ofMillis(2500), "the winner's key gone after its close",
          () -> repository.query(key) == null);
      assertTrue(repository.persistExclusiveEphemeral(key, "this-jvm"));
      assertEquals(0, winner.waitFor(WORKER_WAIT), winner.output());
      assertEquals(0, loser.waitFor(WORKER_WAIT), loser.output());
    }
  }

  @Test
  void aLockSharedByTwoJvmsLosesNoIncrementAndNeverOverlaps() throws Exception {
    String lockKey = "/lock/global/locks/counter";
    String counterKey = "/counter/value";
    int iterations = 25;
    try (WorkerProcess first = new WorkerProcess(
             "count", namespace, lockKey, counterKey, Integer.toString(iterations));
         WorkerProcess second = new WorkerProcess(
             "count", namespace, lockKey, counterKey, Integer.toString(iterations))) {
      assertEquals("ready", first.next(WORKER_WAIT));
      assertEquals("ready", second.next(WORKER_WAIT));
      first.send("go");
      second.send("go");
      List<long[]> sections = new ArrayList<>();
      for (WorkerProcess worker : List.of(first, second)) {
        for (int i = 0; i < iterations; i++) {
          String line = worker.next(Duration.ofSeconds(40));
          assertTrue(line.startsWith("section "), line + "\n" + worker.output());
          String[] fields = line.split(" ");
          sections.add(new long[] {Long.parseLong(fields[1]), Long.parseLong(fields[2])});
        }
        assertEquals("done", worker.next(WORKER_WAIT));
        assertEquals(0, worker.waitFor(WORKER_WAIT), worker.output());
      }
      assertEquals(Integer.toString(2 * iterations), repository.query(counterKey),
          "an increment was lost");
      sections.sort((a, b) -> Long.compare(a[0], b[0]));
      for (int i = 1; i < sections.size(); i++) {
        long[] previous = sections.get(i - 1);
        long[] current = sections.get(i);
        assertTrue(previous[1] < current[0], "critical sections overlap by "
            + TimeUnit.NANOSECONDS.toMicros(previous[1] - current[0]) + " us");
      }
    }
  }

  @Test
  void aJvmKilledWithSigkillLosesItsEphemeralKeysWithinTwoTtls() throws Exception {
    String key = "/nodes/killed";
    try (WorkerProcess victim = new WorkerProcess(
             "hold", namespace, Integer.toString(KILLED_TTL_SECONDS), key, "doomed", "plain")) {
      assertEquals("held", victim.next(WORKER_WAIT));
      assertEquals("doomed", repository.query(key));
      long killedAt = System.nanoTime();
      victim.kill();
      // Consul ends a session between one and two TTLs after its last renewal; 2 s of slack
      // for the renewal just before the kill and a busy machine.
      Duration bound = Duration.ofSeconds(2L * KILLED_TTL_SECONDS + 2);
      TestServer.await(bound, "the killed JVM's ephemeral key gone",
          () -> repository.query(key) == null);
      long goneAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
      System.out.println("figure: the killed JVM's ephemeral key gone after " + goneAfterMillis
          + " ms (TTL " + KILLED_TTL_SECONDS + " s)");
    }
  }
}
