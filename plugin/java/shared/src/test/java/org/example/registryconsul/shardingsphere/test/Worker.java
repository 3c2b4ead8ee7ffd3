// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.shardingsphere.infra.spi.type.typed.TypedSPILoader;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

/**
 * The second JVM of the multi-process tests (started by WorkerProcess). It prints its protocol
 * lines with a leading '@' on stdout (the bridge may log on the same stream) and takes orders on
 * stdin. Commands:
 *
 * <pre>
 *   hold NAMESPACE TTL KEY VALUE exclusive|plain
 *       persistExclusiveEphemeral (prints "@exclusive true|false") or persistEphemeral
 *       ("@held"), then waits for stdin's end, closes the repository, prints "@closed".
 *   count NAMESPACE LOCK_KEY COUNTER_KEY ITERATIONS
 *       prints "@ready", waits for a "go" line, then ITERATIONS times: tryLock, read the
 *       counter, write it + 1, unlock; prints "@section START_NANOS END_NANOS" for each hold.
 *   jdbc YAML_PATH
 *       opens ShardingSphere-JDBC on the YAML (another instance of its cluster) and prints
 *       "@rows N", N the row count of its table t_order; then exits.
 *   start NAMESPACE [allow-untested]
 *       looks up a type no provider has (ShardingSphere's loader constructs every provider,
 *       this jar's too: "@others-load" if that worked), then starts the Consul repository (with
 *       allow-untested: as the JVM property allowUntestedShardingSphere=true lets it):
 *       "@started", or "@refused CLASS: MESSAGE" with what init threw.
 * </pre>
 */
public final class Worker {
  private Worker() {}

  private static void say(String line) {
    System.out.println("@" + line);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    BufferedReader stdin =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    switch (args[0]) {
      case "hold":
        hold(args, stdin);
        break;
      case "count":
        count(args, stdin);
        break;
      case "start":
        start(args);
        break;
      case "jdbc":
        jdbc(args);
        break;
      default:
        throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  private static void hold(String[] args, BufferedReader stdin) throws Exception {
    ClusterPersistRepository repository =
        TestServer.open(args[1], Integer.parseInt(args[2]));
    if (args[5].equals("exclusive")) {
      say("exclusive " + repository.persistExclusiveEphemeral(args[3], args[4]));
    } else {
      repository.persistEphemeral(args[3], args[4]);
      say("held");
    }
    while (stdin.readLine() != null) {
      // held until the parent closes our stdin (or kills us)
    }
    repository.close();
    say("closed");
  }

  private static void count(String[] args, BufferedReader stdin) throws Exception {
    ClusterPersistRepository repository = TestServer.open(args[1], 3);
    DistributedLock lock = HostLocks.lock(repository, args[2]);
    int iterations = Integer.parseInt(args[4]);
    say("ready");
    if (!"go".equals(stdin.readLine())) {
      throw new IllegalStateException("expected go");
    }
    for (int i = 0; i < iterations; i++) {
      if (!lock.tryLock(30000)) {
        say("timeout");
        System.exit(3);
      }
      // System.nanoTime is CLOCK_MONOTONIC on Linux, one clock for every process of the host, so
      // the parent can compare the two workers' sections.
      long start = System.nanoTime();
      String value = repository.query(args[3]);
      int counter = value == null ? 0 : Integer.parseInt(value);
      repository.persist(args[3], Integer.toString(counter + 1));
      long end = System.nanoTime();
      lock.unlock();
      say("section " + start + " " + end);
    }
    repository.close();
    say("done");
  }

  private static void start(String[] args) {
    if (args.length > 2 && args[2].equals("allow-untested")) {
      System.setProperty(
          "org.example.registryconsul.shardingsphere.allowUntestedShardingSphere", "true");
    }
    if (TypedSPILoader.findService(ClusterPersistRepository.class, "NoSuchRepositoryType")
        .isEmpty()) {
      say("others-load");
    }
    ClusterPersistRepository repository = null;
    try {
      repository = TestServer.open(args[1], 3);
      say("started");
    } catch (RuntimeException | LinkageError refused) {
      say("refused " + refused.getClass().getName() + ": " + refused.getMessage());
    } finally {
      TestServer.closeQuietly(repository);
    }
  }

  private static void jdbc(String[] args) throws SQLException {
    try (Connection connection =
             DriverManager.getConnection("jdbc:shardingsphere:absolutepath:" + args[1]);
         Statement statement = connection.createStatement()) {
      say("rows " + count(statement, "SELECT COUNT(*) FROM t_order"));
    }
    System.exit(0); // ShardingSphere's pools and executors keep the JVM otherwise
  }

  /** The single number `sql` selects. */
  static long count(Statement statement, String sql) throws SQLException {
    try (ResultSet result = statement.executeQuery(sql)) {
      if (!result.next()) {
        throw new SQLException("no row from " + sql);
      }
      return result.getLong(1);
    }
  }
}
