// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.ServerSocket;
import java.util.Properties;
import java.util.logging.Level;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepositoryConfiguration;
import org.apache.shardingsphere.mode.repository.cluster.exception.ClusterRepositoryPersistException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How ShardingSphere finds the provider and hands it the YAML's props, raw. */
@Timeout(60)
class DiscoveryAndPropsTest {
  private final String namespace = TestServer.newNamespace(DiscoveryAndPropsTest.class);

  @Test
  void theProviderIsFoundByTypeInAnyCaseAsAFreshNonDefaultInstance() {
    ClusterPersistRepository first = TestServer.discover();
    ClusterPersistRepository second = TestServer.discover();
    assertNotSame(first, second, "each lookup must give a new instance");
    assertEquals("consul", String.valueOf(first.getType()).toLowerCase(java.util.Locale.ROOT));
    assertFalse(first.isDefault());
  }

  /** Opens a repository with `props`, checks it reads its own write, closes it. */
  private void assertWorks(Properties props) {
    ClusterPersistRepository repository = TestServer.open(namespace, props);
    try {
      repository.persist("/props/check", "ok");
      assertEquals("ok", repository.query("/props/check"));
    } finally {
      repository.close();
    }
  }

  @Test
  void integerLongAndBooleanPropsAreTakenAsYamlGivesThem() {
    Properties props = TestServer.props(2);
    props.put("blockQueryTimeMilliseconds", Long.valueOf(1500L));
    props.put("connectTimeoutMilliseconds", Long.valueOf(3000L));
    props.put("tlsVerify", Boolean.TRUE);
    assertWorks(props);
  }

  @Test
  void durationStringsAreTaken() {
    Properties props = TestServer.props(2);
    props.put("timeToLiveSeconds", "2s");
    props.put("blockQueryTimeToSeconds", "5");
    assertWorks(props);
  }

  @Test
  void namespaceServerListsAndUnknownPropsInThePropsAreTolerated() {
    Properties props = TestServer.props(2);
    props.put("namespace", namespace);
    props.put("server-lists", TestServer.serverLists());
    props.put("someFuturePropOfShardingSphere", "whatever");
    props.put("retryIntervalMilliseconds", Integer.valueOf(500));
    try (LogCapture log = new LogCapture()) {
      assertWorks(props);
      assertTrue(log.logged(Level.WARNING, "someFuturePropOfShardingSphere"),
          "the ignored prop is logged as a warning:\n" + log.describe());
    }
  }

  /** Init with `name` set to `value` must fail with an IllegalArgumentException naming both. */
  private void assertRefused(String name, Object value) {
    Properties props = TestServer.props(2);
    props.put(name, value);
    IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class, () -> {
      ClusterPersistRepository repository = TestServer.open(namespace, props);
      repository.close();
    }, name + ": " + value);
    String message = String.valueOf(thrown.getMessage());
    assertTrue(message.contains(name), "message names the prop: " + message);
    assertTrue(message.contains(String.valueOf(value)), "message names the value: " + message);
  }

  @Test
  void aBadValueOfAKnownPropIsIllegalArgumentNamingPropAndValue() {
    assertRefused("timeToLiveSeconds", "3x");
    assertRefused("timeToLiveSeconds", Integer.valueOf(0));
    assertRefused("blockQueryTimeMilliseconds", Long.valueOf(-5L));
    assertRefused("sessionLockDelayMilliseconds", Integer.valueOf(70000));
    assertRefused("tlsVerify", "maybe");
    assertRefused("logLevel", "chatty");
  }

  @Test
  void aBadServerListIsIllegalArgument() {
    ClusterPersistRepository repository = TestServer.discover();
    Properties props = TestServer.props(2);
    repository.init(props);
    IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class,
        () -> repository.init(
            new ClusterPersistRepositoryConfiguration("Consul", namespace, "ftp://host:1", props),
            null));
    assertTrue(String.valueOf(thrown.getMessage()).contains("ftp://host:1"), thrown.getMessage());
  }

  @Test
  void aServerNobodyListensOnIsAClusterRepositoryPersistException() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    Properties props = TestServer.props(2);
    props.remove("tlsCaFile");
    props.remove("tlsCertFile");
    props.remove("tlsKeyFile");
    props.put("connectTimeoutMilliseconds", Integer.valueOf(200));
    props.put("requestTimeoutMilliseconds", Integer.valueOf(500));
    ClusterPersistRepository repository = TestServer.discover();
    repository.init(props);
    // Either init (the instance session) or the first write fails; both are the server's fault.
    assertThrows(ClusterRepositoryPersistException.class, () -> {
      repository.init(new ClusterPersistRepositoryConfiguration(
                          "Consul", namespace, "127.0.0.1:" + closedPort, props),
          null);
      repository.persist("/unreachable", "value");
    });
    closeAfterFailedInit(repository);
  }

  @Test
  void aTokenConsulDoesNotKnowIsAClusterRepositoryPersistException() {
    assumeTrue(TestServer.kind().equals("consul-acl"), "ACLs are on for consul-acl only");
    Properties props = TestServer.props(2);
    props.put("token", "00000000-0000-0000-0000-000000000001");
    ClusterPersistRepository repository = TestServer.discover();
    repository.init(props);
    assertThrows(ClusterRepositoryPersistException.class, () -> {
      repository.init(new ClusterPersistRepositoryConfiguration(
                          "Consul", namespace, TestServer.serverLists(), props),
          null);
      repository.persist("/denied", "value");
    });
    closeAfterFailedInit(repository);
  }

  /** ShardingSphere may close a repository whose init failed: no crash, no hang. */
  private static void closeAfterFailedInit(ClusterPersistRepository repository) {
    try {
      repository.close();
    } catch (IllegalStateException notInitialised) {
      // acceptable: there was nothing to close
    }
  }
}
