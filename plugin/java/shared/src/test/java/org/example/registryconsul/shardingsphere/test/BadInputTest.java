// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Input the plugin cannot take is a Java exception, never a JVM crash: a crash here ends the
 * console launcher without a report, and the driver fails on its exit code.
 */
@Timeout(60)
class BadInputTest {
  /** An unpaired high surrogate: not valid UTF-16, so no UTF-8 string to send. */
  private static final String UNPAIRED_SURROGATE = "\uD800";

  private static ClusterPersistRepository repository;

  @BeforeAll
  static void open() {
    repository = TestServer.open(TestServer.newNamespace(BadInputTest.class), 3);
  }

  @AfterAll
  static void close() {
    TestServer.closeQuietly(repository);
  }

  /** Every call taking a key, applied to `key`. */
  private static List<Executable> callsWithKey(String key) {
    List<Executable> calls = new ArrayList<>();
    calls.add(() -> repository.query(key));
    calls.add(() -> repository.getChildrenKeys(key));
    calls.add(() -> repository.isExisted(key));
    calls.add(() -> repository.persist(key, "value"));
    calls.add(() -> repository.update(key, "value"));
    calls.add(() -> repository.delete(key));
    calls.add(() -> repository.persistEphemeral(key, "value"));
    calls.add(() -> repository.persistExclusiveEphemeral(key, "value"));
    calls.add(() -> repository.watch(key, event -> {}));
    calls.add(() -> repository.removeDataListener(key));
    return calls;
  }

  /** Every call taking a value, applied to `value` under a valid key. */
  private static List<Executable> callsWithValue(String value) {
    List<Executable> calls = new ArrayList<>();
    calls.add(() -> repository.persist("/bad/value", value));
    calls.add(() -> repository.update("/bad/value", value));
    calls.add(() -> repository.persistEphemeral("/bad/ephemeral", value));
    calls.add(() -> repository.persistExclusiveEphemeral("/bad/exclusive", value));
    return calls;
  }

  private static void assertEachThrows(
      Class<? extends Throwable> expected, List<Executable> calls, String what) {
    for (int i = 0; i < calls.size(); i++) {
      Throwable thrown = assertThrows(Throwable.class, calls.get(i), what + ", call #" + i);
      assertTrue(expected.isInstance(thrown),
          what + ", call #" + i + ": expected " + expected.getSimpleName() + ", got " + thrown);
    }
  }

  @Test
  void aNullKeyIsIllegalArgument() {
    assertEachThrows(IllegalArgumentException.class, callsWithKey(null), "null key");
  }

  @Test
  void anEmptyKeyIsIllegalArgument() {
    assertEachThrows(IllegalArgumentException.class, callsWithKey(""), "empty key");
  }

  @Test
  void aKeyThatIsNotValidUtf16IsIllegalArgument() {
    assertEachThrows(IllegalArgumentException.class,
        callsWithKey("/bad/" + UNPAIRED_SURROGATE), "unpaired surrogate in the key");
    assertEachThrows(IllegalArgumentException.class,
        callsWithKey("/bad/x\uDC00y"), "unpaired low surrogate in the key");
  }

  @Test
  void aKeyHoldingANulIsIllegalArgumentNamingItAndWritesNoOtherKey() {
    List<Executable> calls = callsWithKey("/bad/k\u0000evil");
    assertEachThrows(IllegalArgumentException.class, calls, "NUL in the key");
    IllegalArgumentException thrown = assertThrows(
        IllegalArgumentException.class, () -> repository.persist("/bad/k\u0000x", "v"));
    assertTrue(thrown.getMessage().contains("\"/bad/k\\u0000x\" holds a NUL character"),
        thrown.getMessage());
    // The key the C string would have been cut to.
    assertNull(repository.query("/bad/k"));
  }

  @Test
  void aValueHoldingANulIsStoredWhole() {
    repository.persist("/bad/nul-value", "a\u0000b");
    assertEquals("a\u0000b", repository.query("/bad/nul-value"));
  }

  @Test
  void aValueThatIsNotValidUtf16IsIllegalArgumentAndWritesNothing() {
    repository.persist("/bad/value", "before");
    assertEachThrows(IllegalArgumentException.class,
        callsWithValue("x" + UNPAIRED_SURROGATE), "unpaired surrogate in the value");
    assertEquals("before", repository.query("/bad/value"));
    assertNull(repository.query("/bad/ephemeral"));
    assertNull(repository.query("/bad/exclusive"));
  }

  @Test
  void aValueAboveConsulsLimitIsAJavaExceptionAndTheRepositoryGoesOn() {
    String huge = "v".repeat(600 * 1024);  // Consul refuses values above 512 KB
    repository.persist("/bad/value", "present, so that update writes");
    assertEachThrows(RuntimeException.class, callsWithValue(huge), "a 600 KB value");
    repository.persist("/bad/after", "still working");
    assertEquals("still working", repository.query("/bad/after"));
  }

  @Test
  void aLockNameThatIsNotValidUtf16IsIllegalArgument() {
    Consumer<String> lock =
        name -> HostLocks.lock(repository, name).tryLock(100);
    assertThrows(IllegalArgumentException.class, () -> lock.accept(""));
    assertThrows(IllegalArgumentException.class,
        () -> lock.accept("/lock/global/locks/" + UNPAIRED_SURROGATE));
    assertThrows(IllegalArgumentException.class,
        () -> lock.accept("/lock/global/locks/a\u0000b"));
  }
}
