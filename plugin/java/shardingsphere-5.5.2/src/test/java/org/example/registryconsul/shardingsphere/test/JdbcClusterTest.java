// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.h2.tools.Server;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ShardingSphere-JDBC in cluster mode on the Consul repository: its real ShardingSphereDriver on
 * a YAML with {@code mode.repository.type: Consul}, a table sharded two ways on an H2 server both
 * JVMs reach. This JVM creates the table and writes rows; a second JVM, another ShardingSphere
 * instance of the same cluster whose YAML names only the cluster (no data source, no rule), finds
 * the storage, the sharding rule and the table in the registry and reads the rows through them.
 */
@Timeout(180)
class JdbcClusterTest {
  private static final Duration PATIENCE = Duration.ofSeconds(120);

  @Test
  void aTableCreatedByOneInstanceIsSeenAndReadByAnother() throws Exception {
    String namespace = TestServer.newNamespace(JdbcClusterTest.class);
    Path dir = Files.createTempDirectory("jdbc-cluster-");
    Server storage = startStorage();
    Path yaml = dir.resolve("cluster.yaml");
    Path joining = dir.resolve("joining.yaml");
    try {
      Files.writeString(yaml, modeYaml(namespace) + storageAndRules(storage.getPort(),
          dir.resolve("ds_0")), StandardCharsets.UTF_8);
      Files.writeString(joining, modeYaml(namespace), StandardCharsets.UTF_8);
      String url = "jdbc:shardingsphere:absolutepath:" + yaml;
      try (Connection connection = DriverManager.getConnection(url);
           Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT)");
        statement.executeUpdate("INSERT INTO t_order (order_id, user_id) VALUES (1, 10)");
        statement.executeUpdate("INSERT INTO t_order (order_id, user_id) VALUES (2, 20)");
        assertEquals(2L, Worker.count(statement, "SELECT COUNT(*) FROM t_order"));
      }
      try (WorkerProcess other = new WorkerProcess("jdbc", joining.toString())) {
        assertEquals("rows 2", other.next(PATIENCE), other.output());
        assertEquals(0, other.waitFor(PATIENCE), other.output());
      }
      ClusterPersistRepository registry = TestServer.open(namespace, 3);
      try {
        assertFalse(registry.getChildrenKeys("/metadata").isEmpty(),
            "ShardingSphere keeps its metadata in the registry");
      } finally {
        registry.close();
      }
    } finally {
      storage.stop();
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(each -> each.toFile().delete());
      }
    }
  }

  /**
   * An H2 server on a free port below 10000: ShardingSphere's pattern of H2 URLs takes at most
   * four digits of port (and a path of a file database: not mem:).
   */
  private static Server startStorage() throws SQLException {
    Random random = new Random();
    SQLException last = null;
    for (int attempt = 0; attempt < 50; attempt++) {
      int port = 2000 + random.nextInt(8000);
      try {
        return Server.createTcpServer("-tcpPort", String.valueOf(port), "-ifNotExists").start();
      } catch (SQLException taken) {
        last = taken;
      }
    }
    throw last;
  }

  /** The database and the cluster mode on the Consul repository, with the test server's props. */
  private static String modeYaml(String namespace) {
    StringBuilder props = new StringBuilder();
    props.append("      server-lists: ").append(TestServer.serverLists()).append('\n');
    for (Map.Entry<Object, Object> each : TestServer.props(3).entrySet()) {
      props.append("      ").append(each.getKey()).append(": '").append(each.getValue())
          .append("'\n");
    }
    return "databaseName: sharding_db\n"
        + "mode:\n"
        + "  type: Cluster\n"
        + "  repository:\n"
        + "    type: Consul\n"
        + "    props:\n"
        + "      namespace: " + namespace + "\n"
        + props;
  }

  /** One H2 storage, and t_order sharded two ways on it. */
  private static String storageAndRules(int storagePort, Path database) {
    return "dataSources:\n"
        + "  ds_0:\n"
        + "    dataSourceClassName: com.zaxxer.hikari.HikariDataSource\n"
        + "    driverClassName: org.h2.Driver\n"
        + "    jdbcUrl: jdbc:h2:tcp://127.0.0.1:" + storagePort + "/" + database
        + ";MODE=MySQL\n"
        + "    username: sa\n"
        + "    password:\n"
        + "rules:\n"
        + "- !SHARDING\n"
        + "  tables:\n"
        + "    t_order:\n"
        + "      actualDataNodes: ds_0.t_order_${0..1}\n"
        + "      tableStrategy:\n"
        + "        standard:\n"
        + "          shardingColumn: order_id\n"
        + "          shardingAlgorithmName: t_order_mod\n"
        + "  shardingAlgorithms:\n"
        + "    t_order_mod:\n"
        + "      type: INLINE\n"
        + "      props:\n"
        + "        algorithm-expression: t_order_${order_id % 2}\n";
  }
}
