// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bridge jar in a ShardingSphere it was not built for refuses to start, naming the versions,
 * and never keeps ShardingSphere from loading its other repository types. Runs a JVM on this
 * ShardingSphere version's real jars with the other version's bridge jar in place of this one
 * (the driver passes both jars).
 */
@Timeout(120)
class HostVersionTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private final String namespace = TestServer.newNamespace(HostVersionTest.class);

  private static String property(String name) {
    String value = System.getProperty(TestServer.PROPERTY_PREFIX + name, "");
    if (value.isEmpty()) {
      throw new IllegalStateException("system property " + TestServer.PROPERTY_PREFIX + name
          + " is not set (run through the driver)");
    }
    return value;
  }

  /** This JVM's class path with the bridge jar replaced by `jar`. */
  private static String classPathWith(String jar) {
    String own = property("bridgeJar");
    String classPath = System.getProperty("java.class.path");
    assertTrue(classPath.contains(own), "the bridge jar " + own + " is on " + classPath);
    return classPath.replace(own, jar);
  }

  private static String start(String classPath, String... args) throws Exception {
    String[] command = new String[args.length + 1];
    command[0] = "start";
    System.arraycopy(args, 0, command, 1, args.length);
    try (WorkerProcess worker = WorkerProcess.onClassPath(classPath, command)) {
      assertEquals("others-load", worker.next(PATIENCE),
          "looking up another repository type constructs this jar's provider without harm");
      String outcome = worker.next(PATIENCE);
      assertEquals(0, worker.waitFor(PATIENCE), worker.output());
      return outcome;
    }
  }

  @Test
  void theJarOfThisVersionStarts() throws Exception {
    assertEquals("started", start(classPathWith(property("bridgeJar")), namespace));
  }

  @Test
  void theJarOfAnotherVersionRefusesToStartNamingBothVersions() throws Exception {
    String outcome = start(classPathWith(property("otherBridgeJar")), namespace);
    String host = property("shardingsphereVersion");
    assertTrue(outcome.startsWith("refused java.lang.IllegalStateException: "), outcome);
    assertTrue(outcome.contains("this ShardingSphere is " + host), outcome);
    assertTrue(outcome.contains("registry-consul-for-shardingsphere-"), outcome);
    String served = host.equals("5.5.3") ? "5.5.2" : "5.5.3";
    assertTrue(outcome.contains("serves ShardingSphere " + served), outcome);
  }

  /**
   * Let past the version check, the jar of the other version still refuses: it does not
   * implement this version's repository interface, and the message names what it lacks.
   */
  @Test
  void theJarOfAnotherVersionLetPastTheVersionCheckRefusesNamingWhatItLacks() throws Exception {
    String outcome =
        start(classPathWith(property("otherBridgeJar")), namespace, "allow-untested");
    assertTrue(outcome.startsWith("refused java.lang.IllegalStateException: "), outcome);
    String lacking = property("shardingsphereVersion").equals("5.5.3")
        ? "names org.apache.shardingsphere.mode.repository.cluster.lock.holder.DistributedLockHolder"
        : "needs getDistributedLockHolder()";
    assertTrue(outcome.contains(lacking), outcome);
  }
}
