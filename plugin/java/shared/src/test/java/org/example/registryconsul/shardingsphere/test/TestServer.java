// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.shardingsphere.infra.config.mode.ModeConfiguration;
import org.apache.shardingsphere.infra.instance.ComputeNodeInstance;
import org.apache.shardingsphere.infra.instance.ComputeNodeInstanceContext;
import org.apache.shardingsphere.infra.instance.metadata.proxy.ProxyInstanceMetaData;
import org.apache.shardingsphere.infra.spi.type.typed.TypedSPILoader;
import org.apache.shardingsphere.infra.util.eventbus.EventBusContext;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepositoryConfiguration;

/**
 * The server the tests run against, as the driver (integration/java) passes it in system
 * properties, and the way ShardingSphere finds and starts a repository: ServiceLoader, the
 * provider whose type is "Consul" in any case, through ShardingSphere's real TypedSPILoader.
 */
final class TestServer {
  /** Every system property of the driver starts with this; a worker JVM gets them all. */
  static final String PROPERTY_PREFIX = "registry.test.";

  private static final AtomicLong namespaceCounter = new AtomicLong();

  private TestServer() {}

  /** "host:port" or "https://host:port" of the server under test. */
  static String serverLists() {
    String value = System.getProperty(PROPERTY_PREFIX + "serverLists", "");
    if (value.isEmpty()) {
      throw new IllegalStateException(
          "system property " + PROPERTY_PREFIX + "serverLists is not set (run through the driver)");
    }
    return value;
  }

  /** dev, consul, consul-acl or consul-tls. */
  static String kind() {
    return System.getProperty(PROPERTY_PREFIX + "kind", "dev");
  }

  private static String optional(String name) {
    return System.getProperty(PROPERTY_PREFIX + name, "");
  }

  /**
   * A namespace no other class, test run or concurrent ctest job uses: classes share one server.
   */
  static String newNamespace(Class<?> testClass) {
    return String.format(
        Locale.ROOT,
        "java_%s_%d_%d_%d",
        testClass.getSimpleName(),
        ProcessHandle.current().pid(),
        System.currentTimeMillis(),
        namespaceCounter.incrementAndGet());
  }

  /**
   * The props the code under test needs on this server (token, TLS files), a short session TTL
   * (sessions matter in these tests) and no lock-delay (released locks are retaken at once).
   * Values are typed as YAML would give them: Integers, not Strings.
   */
  static Properties props(int timeToLiveSeconds) {
    Properties props = new Properties();
    props.put("timeToLiveSeconds", Integer.valueOf(timeToLiveSeconds));
    props.put("sessionLockDelayMilliseconds", Integer.valueOf(0));
    props.put("lockRetryMilliseconds", Integer.valueOf(100));
    props.put("requestTimeoutMilliseconds", Integer.valueOf(10000));
    for (String name : new String[] {"token", "tlsCaFile", "tlsCertFile", "tlsKeyFile"}) {
      String value = optional(name);
      if (!value.isEmpty()) {
        props.put(name, value);
      }
    }
    return props;
  }

  /**
   * A fresh provider instance of type "Consul", found by ShardingSphere's own loader (which
   * constructs every registered provider on each lookup and matches the type in any case); no
   * other provider of that type may be on the class path.
   */
  static ClusterPersistRepository discover() {
    List<ClusterPersistRepository> matches = new ArrayList<>();
    for (ClusterPersistRepository each : ServiceLoader.load(ClusterPersistRepository.class)) {
      if ("consul".equalsIgnoreCase(String.valueOf(each.getType()))) {
        matches.add(each);
      }
    }
    if (matches.size() != 1) {
      throw new AssertionError("expected one ClusterPersistRepository of type Consul, found "
          + matches.size() + ": " + matches);
    }
    return TypedSPILoader.getService(ClusterPersistRepository.class, "Consul");
  }

  /**
   * A repository of `namespace` with `props`, started as ShardingSphere starts it: its loader's
   * lookup with the props (which calls init(props)), then init(config, context).
   */
  static ClusterPersistRepository open(String namespace, Properties props) {
    return open(namespace, props, null);
  }

  /**
   * The context of a Proxy instance `instanceId` as ShardingSphere makes it before the repository
   * (the same constructors in 5.5.2 and 5.5.3; its worker id generator: HostContext).
   */
  static ComputeNodeInstanceContext newInstanceContext(String instanceId) {
    return new ComputeNodeInstanceContext(
        new ComputeNodeInstance(new ProxyInstanceMetaData(instanceId, 3307)),
        new ModeConfiguration("Cluster", null), new EventBusContext());
  }

  /** As open(namespace, props), handing the repository `context` as ShardingSphere does. */
  static ClusterPersistRepository open(
      String namespace, Properties props, ComputeNodeInstanceContext context) {
    ClusterPersistRepository repository =
        TypedSPILoader.getService(ClusterPersistRepository.class, "Consul", props);
    repository.init(
        new ClusterPersistRepositoryConfiguration("Consul", namespace, serverLists(), props),
        context);
    return repository;
  }

  static ClusterPersistRepository open(String namespace, int timeToLiveSeconds) {
    return open(namespace, props(timeToLiveSeconds));
  }

  /** Closes `repository` unless null, for finally blocks and @AfterEach. */
  static void closeQuietly(ClusterPersistRepository repository) {
    if (repository != null) {
      repository.close();
    }
  }

  /**
   * Polls `condition` every 20 ms until it holds, failing with `what` after `timeout`: the
   * bounded wait for something another thread, process or the server does.
   */
  static void await(Duration timeout, String what, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within " + timeout.toMillis() + " ms: " + what);
      }
      Thread.sleep(20);
    }
  }

  /** The JVM's live threads. */
  static int liveThreads() {
    return Thread.getAllStackTraces().size();
  }

  /** Names of the live threads, for failure messages. */
  static String liveThreadNames() {
    List<String> names = new ArrayList<>();
    for (Thread each : Thread.getAllStackTraces().keySet()) {
      names.add(each.getName() + (each.isDaemon() ? " (daemon)" : ""));
    }
    names.sort(null);
    return String.join(", ", names);
  }

  /** Waits until the live threads are at most `limit`, naming them when they are not. */
  static void awaitThreadsAtMost(int limit, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (liveThreads() > limit) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("live threads " + liveThreads() + " > " + limit + " after "
            + timeout.toMillis() + " ms: " + liveThreadNames());
      }
      Thread.sleep(20);
    }
  }
}
