// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Properties;
import org.apache.shardingsphere.infra.spi.type.typed.TypedSPILoader;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepositoryConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Through the bridge, as the C ABI and registryctl: against a server that never answers, every
 * call ends by its documented bound (docs/operations.md, "Bounds you can rely on"); against one
 * that answers with an endless body, the call fails once the answer passes the most one answer
 * may hold (128 MiB), and the JVM's memory stays bounded. The servers are this test's own.
 */
@Timeout(120)
class HostileServerTest {
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);
  /** Scheduling and a JVM's start-up; far less than a second request timeout would add. */
  private static final Duration SLACK = Duration.ofMillis(900);

  /**
   * For the endless answer: long enough for the 128 MiB limit to come first on a loaded machine
   * (the server writes at 10-1000 MB/s); if the timeout comes first, the call still ends.
   */
  private static final Duration LONG_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  private static ClusterPersistRepository open(MisbehavingServer server, Duration timeout) {
    Properties props = new Properties();
    props.put("requestTimeoutMilliseconds", Integer.valueOf((int) timeout.toMillis()));
    props.put("timeToLiveSeconds", Integer.valueOf(10));
    ClusterPersistRepository repository =
        TypedSPILoader.getService(ClusterPersistRepository.class, "Consul", props);
    repository.init(
        new ClusterPersistRepositoryConfiguration(
            "Consul", TestServer.newNamespace(HostileServerTest.class), server.address(), props),
        null);
    return repository;
  }

  /** Runs `call`, which must throw, within `bound`; returns what it threw. */
  private static Throwable throwsWithin(Duration bound, Executable call, String what) {
    long start = System.nanoTime();
    Throwable thrown = assertThrows(RuntimeException.class, call, what);
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertTrue(took.compareTo(bound.plus(SLACK)) < 0, what + " took " + took + ": " + thrown);
    return thrown;
  }

  /** The messages of `thrown` and its causes, one per line. */
  private static String messages(Throwable thrown) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      text.append(t.getMessage()).append('\n');
    }
    return text.toString();
  }

  /** The JVM's resident set, from /proc/self/status, in bytes. */
  private static long residentBytes() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IOException("no VmRSS in /proc/self/status");
  }

  @Test
  void againstASilentServerEveryCallEndsByItsBound() throws Exception {
    try (MisbehavingServer server = new MisbehavingServer(MisbehavingServer.Behaviour.SILENT)) {
      ClusterPersistRepository repository = open(server, REQUEST_TIMEOUT);
      try {
        Throwable read = throwsWithin(REQUEST_TIMEOUT, () -> repository.query("/k"), "query");
        assertTrue(messages(read).contains(server.address()), messages(read));
        throwsWithin(REQUEST_TIMEOUT, () -> repository.getChildrenKeys("/k"), "getChildrenKeys");
        // A write whose answer never came may have been applied: it is sent again, at most 3
        // times, each within its own request timeout.
        throwsWithin(REQUEST_TIMEOUT.multipliedBy(4), () -> repository.persist("/k", "v"),
            "persist");
        // Creating the session, then the write.
        throwsWithin(REQUEST_TIMEOUT.multipliedBy(2),
            () -> repository.persistEphemeral("/e", "v"), "persistEphemeral");
      } finally {
        TestServer.closeQuietly(repository);
      }
    }
  }

  @Test
  void anEndlessAnswerIsCutAndTheJvmsMemoryStaysBounded() throws Exception {
    try (MisbehavingServer server =
        new MisbehavingServer(MisbehavingServer.Behaviour.ENDLESS_BODY)) {
      ClusterPersistRepository repository = open(server, LONG_REQUEST_TIMEOUT);
      try {
        long before = residentBytes();
        int cut = 0;
        for (int i = 0; i < 3; ++i) {
          String text = messages(
              throwsWithin(LONG_REQUEST_TIMEOUT, () -> repository.query("/k"), "query " + i));
          boolean tooLarge = text.contains("the answer is larger than");
          assertTrue(tooLarge || text.contains("Timeout was reached"), text);
          cut += tooLarge ? 1 : 0;
        }
        System.out.println("figure: " + cut + " of 3 answers cut at the size limit (else by the "
            + "request timeout: the server wrote slowly)");
        long grown = residentBytes() - before;
        // The answer is held up to 128 MiB (its buffer briefly twice that), then dropped.
        assertTrue(grown < 512L << 20, "the JVM grew by " + (grown >> 20) + " MiB");
        System.out.println("figure: resident set grew by " + (grown >> 20) + " MiB");
      } finally {
        TestServer.closeQuietly(repository);
      }
    }
  }
}
