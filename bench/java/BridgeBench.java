// SPDX-License-Identifier: Apache-2.0
package registry.consul.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepositoryConfiguration;

/**
 * The bridge half of bench/java/bridge_bench.cc: the same three figures as its C ABI half, made
 * through ShardingSphere's SPI (ServiceLoader, type "Consul", init) as ShardingSphere itself
 * would, and printed as one line of JSON with every measured latency for the C++ driver to pool
 * and compare. Keys, values, warm-up and clocks are the C++ half's, so that only the path differs:
 *
 * <pre>
 *   java -cp SPI_JAR:BRIDGE_JAR:BENCH_JAR registry.consul.bench.BridgeBench --server=HOST:PORT
 *       --namespace=NS --ops=5000 --watch_writes=1000 --warmup_percent=20 --value_bytes=100
 *       --round=0
 * </pre>
 */
public final class BridgeBench {
  private BridgeBench() {}

  /** Samples of one figure: the operations after the warm-up, their wall time and the JVM's CPU. */
  private static final class Phase {
    final long[] latenciesNs;
    int count;
    long startNs;
    long elapsedNs;
    long cpuStartNs;
    long cpuNs;

    Phase(int measured) {
      latenciesNs = new long[measured];
    }

    /** Called before operation {@code i}: the clocks start at the first measured one. */
    void before(int i, int warm) {
      if (i == warm) {
        cpuStartNs = processCpuNs();
        startNs = System.nanoTime();
      }
    }

    void record(int i, int warm, long latencyNs) {
      if (i >= warm) {
        latenciesNs[count++] = latencyNs;
      }
    }

    void stop() {
      elapsedNs = System.nanoTime() - startNs;
      cpuNs = processCpuNs() - cpuStartNs;
    }

    String json() {
      StringBuilder out = new StringBuilder();
      out.append("{\"ops\":").append(count).append(",\"seconds\":").append(elapsedNs / 1e9);
      out.append(",\"cpu_seconds\":").append(cpuNs / 1e9).append(",\"latencies_ns\":[");
      for (int i = 0; i < count; i++) {
        out.append(i == 0 ? "" : ",").append(latenciesNs[i]);
      }
      return out.append("]}").toString();
    }
  }

  /** Arrival times of watch events by value, so a late duplicate cannot hide the awaited one. */
  private static final class Waiter {
    private final Map<String, Long> arrivedNs = new HashMap<>();

    synchronized void arrived(String value, long nowNs) {
      arrivedNs.putIfAbsent(value, nowNs);
      notifyAll();
    }

    /** The arrival time of {@code value}; fails after 10 s, as the C ABI half does. */
    synchronized long await(String value) throws InterruptedException {
      long deadline = System.nanoTime() + 10_000_000_000L;
      Long at;
      while ((at = arrivedNs.get(value)) == null) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new IllegalStateException("no watch event carrying " + value + " within 10 s");
        }
        wait(left / 1_000_000 + 1);
      }
      return at;
    }
  }

  // The JVM's CPU (every thread: JIT compilers and GC included, which is what the bridge costs).
  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  private static long processCpuNs() {
    return OS.getProcessCpuTime();
  }

  /** The value of watch write {@code i}: unique, padded to {@code bytes} like the C++ half's. */
  static String watchValue(int i, int bytes) {
    StringBuilder value = new StringBuilder("w").append(i).append('-');
    while (value.length() < bytes) {
      value.append('x');
    }
    return value.toString();
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> flags = new HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (!arg.startsWith("--") || eq < 0) {
        throw new IllegalArgumentException("bad argument: " + arg);
      }
      flags.put(arg.substring(2, eq), arg.substring(eq + 1));
    }
    String server = flags.get("server");
    String namespace = flags.get("namespace");
    int ops = Integer.parseInt(flags.getOrDefault("ops", "5000"));
    int watchWrites = Integer.parseInt(flags.getOrDefault("watch_writes", "1000"));
    int warmupPercent = Integer.parseInt(flags.getOrDefault("warmup_percent", "20"));
    int valueBytes = Integer.parseInt(flags.getOrDefault("value_bytes", "100"));
    int round = Integer.parseInt(flags.getOrDefault("round", "0"));

    ClusterPersistRepository repository = null;
    for (ClusterPersistRepository each : ServiceLoader.load(ClusterPersistRepository.class)) {
      if ("Consul".equals(String.valueOf(each.getType()))) {
        repository = each;
      }
    }
    if (repository == null) {
      throw new IllegalStateException("no ClusterPersistRepository of type Consul found");
    }
    repository.init(
        new ClusterPersistRepositoryConfiguration("Consul", namespace, server, new Properties()),
        null);

    // Made before the clocks run, as the C++ half makes its keys.
    String[] keys = new String[ops];
    for (int i = 0; i < ops; i++) {
      keys[i] = "/persist/" + i;
    }
    String value = String.valueOf((char) ('a' + round % 26)).repeat(valueBytes);
    int warm = ops * warmupPercent / 100;

    Phase persist = new Phase(ops - warm);
    for (int i = 0; i < ops; i++) {
      persist.before(i, warm);
      long start = System.nanoTime();
      repository.persist(keys[i], value);
      persist.record(i, warm, System.nanoTime() - start);
    }
    persist.stop();

    Phase query = new Phase(ops - warm);
    for (int i = 0; i < ops; i++) {
      query.before(i, warm);
      long start = System.nanoTime();
      String read = repository.query(keys[i]);
      query.record(i, warm, System.nanoTime() - start);
      if (read == null) {
        throw new IllegalStateException("query " + keys[i] + ": absent");
      }
    }
    query.stop();

    // Write -> event: a listener on the prefix, each write waited for, so nothing coalesces.
    Waiter waiter = new Waiter();
    repository.watch("/watch", event -> waiter.arrived(event.getValue(), System.nanoTime()));
    int watchWarm = watchWrites * warmupPercent / 100;
    Phase watch = new Phase(watchWrites - watchWarm);
    for (int i = 0; i < watchWrites; i++) {
      String written = watchValue(i, valueBytes);
      String key = "/watch/k" + (i % 10);
      watch.before(i, watchWarm);
      long start = System.nanoTime();
      repository.persist(key, written);
      watch.record(i, watchWarm, waiter.await(written) - start);
    }
    watch.stop();
    repository.removeDataListener("/watch");
    repository.close();

    System.out.println("{\"jvm\":\"" + System.getProperty("java.vm.name") + " "
        + System.getProperty("java.vm.version") + "\",\"persist\":" + persist.json()
        + ",\"query\":" + query.json() + ",\"watch\":" + watch.json() + "}");
  }
}
