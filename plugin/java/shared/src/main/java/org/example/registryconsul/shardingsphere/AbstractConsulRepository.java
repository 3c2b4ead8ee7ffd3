// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.shardingsphere.infra.instance.ComputeNodeInstanceContext;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepositoryConfiguration;
import org.apache.shardingsphere.mode.repository.cluster.listener.DataChangedEventListener;
import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

/**
 * ShardingSphere's cluster repository of {@code type: Consul}, served by the Consul registry
 * plugin through its C ABI: everything but the access to locks, whose shape differs between
 * ShardingSphere versions (each version module's {@code RegistryConsulRepository} adds it). The
 * constructor does nothing (ShardingSphere constructs every provider on each lookup); {@link
 * #init(ClusterPersistRepositoryConfiguration, ComputeNodeInstanceContext)} checks that this jar
 * serves the running ShardingSphere ({@link HostCheck}), loads the native library and opens the
 * repository.
 *
 * <p>Semantics (ShardingSphere's ZooKeeper repository where the SPI is silent): keys are absolute
 * ("/a/b"); {@link #query} gives null for an absent key; {@link #getChildrenKeys} gives the
 * direct children's names, deduplicated and sorted ascending (byte order of their UTF-8, the
 * plugin's order, so every instance sees the same list); {@link #update} of an absent key writes
 * nothing; {@link #delete} removes the key and its subtree; ephemeral keys live as long as this
 * instance's Consul session. A second {@link #watch} of a key adds a listener, and {@link
 * #removeDataListener} removes every listener of that key. Bad input is an {@link
 * IllegalArgumentException} naming it; calls after {@link #close} an {@link
 * IllegalStateException}; other failures a {@code ClusterRepositoryPersistException} caused by a
 * {@link NativeStatusException}. Thread-safe.
 */
abstract class AbstractConsulRepository implements ClusterPersistRepository {
  /**
   * How long {@link #close} waits for the session to end and the threads to stop: this system
   * property, in milliseconds, else 10 s.
   */
  static final String CLOSE_WAIT_PROPERTY =
      AbstractConsulRepository.class.getPackageName() + ".closeWaitMillis";

  private static final System.Logger LOG =
      System.getLogger(AbstractConsulRepository.class.getPackageName());

  private final Map<String, List<Long>> watchIdsByKey = new ConcurrentHashMap<>();
  private final LockSource lockSource = new LockSource();
  private final Map<String, DistributedLock> locksByKey = new ConcurrentHashMap<>();
  private volatile NativeHandle handle;
  private volatile ComputeNodeInstanceContext instanceContext; // set once, by init

  @Override
  public Object getType() {
    return "Consul";
  }

  @Override
  public void init(ClusterPersistRepositoryConfiguration config, ComputeNodeInstanceContext ctx) {
    if (handle != null) {
      throw new IllegalStateException("the Consul repository is already initialised");
    }
    HostCheck.requireSupported(getClass());
    NativeLibrary.load();
    BridgeProps props = BridgeProps.of(config, BridgeProps.knownKeys(NativeRepository.knownProps()));
    try {
      handle = new NativeHandle(
          NativeRepository.open(props.keys, props.values, NativeLibrary.libraryPathDirs()));
    } catch (NativeStatusException e) {
      throw Errors.of(e);
    }
    if (ctx != null) {
      instanceContext = ctx;
      ConnectionSink sink = new ConnectionSink(handle, this::afterSessionLoss);
      call(address -> NativeRepository.addConnectionListener(address, sink));
    }
  }

  /**
   * What ShardingSphere's ZooKeeper repository does when its session comes back after a loss,
   * adapted to a plugin that binds every ephemeral key to the new session itself (the instance
   * is online again without help): an exclusive key another instance took meanwhile is not taken
   * back. If that was this instance's worker id reservation, the worker id is no longer its own:
   * its record goes, and ShardingSphere's generator reserves a free one. The node paths are the
   * version's own: each version module has its {@code WorkerIdNodes}.
   */
  private void afterSessionLoss() {
    ComputeNodeInstanceContext ctx = instanceContext;
    int workerId = ctx.getWorkerId();
    if (workerId < 0) {
      return; // no worker id in use (ShardingSphere makes one on first need)
    }
    String instanceId = ctx.getInstance().getMetaData().getId();
    String holder = query(WorkerIdNodes.reservation(workerId));
    if (instanceId.equals(holder)) {
      return; // the reservation was taken back with the rest
    }
    LOG.log(Level.WARNING, "worker id " + workerId + " of instance " + instanceId
        + " was reserved by " + holder + " while this instance's Consul session was lost; "
        + "reserving another");
    delete(WorkerIdNodes.record(instanceId));
    int generated = ctx.generateWorkerId(new Properties());
    LOG.log(Level.INFO, "instance " + instanceId + " now has worker id " + generated);
  }

  @Override
  public String query(String key) {
    byte[] k = Utf8.key(key);
    return call(address -> Utf8.decode(NativeRepository.get(address, k)));
  }

  @Override
  public List<String> getChildrenKeys(String key) {
    byte[] k = Utf8.key(key);
    byte[][] names = call(address -> NativeRepository.children(address, k));
    List<String> result = new ArrayList<>(names.length);
    for (byte[] name : names) {
      result.add(Utf8.decode(name));
    }
    return result;
  }

  @Override
  public boolean isExisted(String key) {
    byte[] k = Utf8.key(key);
    return call(address -> NativeRepository.exists(address, k));
  }

  @Override
  public void persist(String key, String value) {
    byte[] k = Utf8.key(key);
    byte[] v = Utf8.value(value, key);
    call(address -> {
      NativeRepository.persist(address, k, v);
      return null;
    });
  }

  @Override
  public void update(String key, String value) {
    byte[] k = Utf8.key(key);
    byte[] v = Utf8.value(value, key);
    call(address -> NativeRepository.update(address, k, v));
  }

  @Override
  public void delete(String key) {
    byte[] k = Utf8.key(key);
    call(address -> {
      NativeRepository.delete(address, k);
      return null;
    });
  }

  @Override
  public void persistEphemeral(String key, String value) {
    byte[] k = Utf8.key(key);
    byte[] v = Utf8.value(value, key);
    call(address -> {
      NativeRepository.persistEphemeral(address, k, v);
      return null;
    });
  }

  @Override
  public boolean persistExclusiveEphemeral(String key, String value) {
    byte[] k = Utf8.key(key);
    byte[] v = Utf8.value(value, key);
    return call(address -> NativeRepository.persistExclusiveEphemeral(address, k, v));
  }

  /**
   * The plugin's lock of {@code lockKey}, one per key for this repository's life: what each
   * version's lock access hands out (5.5.2's through {@link LockSource#lock}). The one cache of
   * locks: each lock makes its native lock once, on its first use.
   */
  protected final DistributedLock lockOf(String lockKey) {
    Utf8.key(lockKey);
    opened();
    return locksByKey.computeIfAbsent(lockKey, key -> new RegistryConsulLock(key, lockSource));
  }

  /** What the lock creator of ShardingSphere 5.5.2 gets as its client. */
  protected final LockSource lockSource() {
    opened();
    return lockSource;
  }

  @Override
  public void watch(String key, DataChangedEventListener listener) {
    byte[] k = Utf8.key(key);
    if (listener == null) {
      throw new IllegalArgumentException("listener of '" + key + "' must not be null");
    }
    NativeHandle h = opened();
    WatchSink sink = new WatchSink(key, listener, h);
    // The native watch lists the subtree (a request): made before the map is touched, so no
    // request runs inside the map's lock. A removeDataListener of the same key that runs in
    // between does not see this watch: the watch then counts as added after that removal.
    long id = call(address -> NativeRepository.watch(address, k, sink));
    watchIdsByKey.compute(key, (unused, ids) -> {
      List<Long> result = ids == null ? new ArrayList<>() : ids;
      result.add(id);
      return result;
    });
  }

  @Override
  public void removeDataListener(String key) {
    Utf8.key(key);
    NativeHandle h = opened();
    long address = h.enter(); // IllegalStateException after close, as every other call
    try {
      List<Long> ids = watchIdsByKey.remove(key);
      for (long id : ids == null ? List.<Long>of() : ids) {
        NativeRepository.removeWatch(address, id);
      }
    } finally {
      h.exit();
    }
  }

  /** Ends the session (this instance's ephemeral keys go at once) and stops every thread. */
  @Override
  public void close() {
    NativeHandle h = handle;
    if (h != null) {
      h.close(Duration.ofMillis(Long.getLong(CLOSE_WAIT_PROPERTY, 10_000L)));
    }
    watchIdsByKey.clear();
  }

  /** A native call on the open repository. */
  interface NativeCall<T> {
    T run(long address) throws NativeStatusException;
  }

  <T> T call(NativeCall<T> body) {
    return call(body, Errors::of);
  }

  /** As {@link #call(NativeCall)}, with {@code errors} mapping the plugin's failures. */
  <T> T call(NativeCall<T> body, Function<NativeStatusException, RuntimeException> errors) {
    NativeHandle h = opened();
    long address = h.enter();
    try {
      return body.run(address);
    } catch (NativeStatusException e) {
      throw errors.apply(e);
    } finally {
      h.exit();
    }
  }

  private NativeHandle opened() {
    NativeHandle h = handle;
    if (h == null) {
      throw new IllegalStateException("the Consul repository is not initialised: call init first");
    }
    return h;
  }

  /**
   * What the lock creator of ShardingSphere 5.5.2 gets as its client, and what each lock calls
   * the plugin through.
   */
  final class LockSource {
    /** The repository's lock of {@code lockKey} (see {@link #lockOf}). */
    DistributedLock lock(String lockKey) {
      return lockOf(lockKey);
    }

    <T> T call(NativeCall<T> body, Function<NativeStatusException, RuntimeException> errors) {
      return AbstractConsulRepository.this.call(body, errors);
    }
  }
}
