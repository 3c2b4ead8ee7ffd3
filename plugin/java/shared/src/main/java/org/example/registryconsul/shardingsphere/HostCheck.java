// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.util.List;
import java.util.Properties;
import java.util.jar.Manifest;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;

/**
 * Refuses to start a repository inside a ShardingSphere whose {@link ClusterPersistRepository} this
 * jar does not fully implement (another ShardingSphere version than the jar was built for), with
 * a message naming both versions, instead of an {@link AbstractMethodError} at some later call.
 * Runs in {@code init}, never in a constructor: ShardingSphere constructs every provider on each
 * lookup, and the other repository types must still load.
 */
final class HostCheck {
  /** The manifest attribute naming the ShardingSphere versions a jar serves. */
  static final String VERSIONS_ATTRIBUTE = "ShardingSphere-Versions";

  /**
   * This system property set to {@code true} lets the jar start in a ShardingSphere version it was
   * not tested on, as long as that version's repository interface is fully implemented.
   */
  static final String ALLOW_UNTESTED_PROPERTY =
      HostCheck.class.getPackageName() + ".allowUntestedShardingSphere";

  private HostCheck() {}

  /**
   * Throws IllegalStateException unless the running ShardingSphere is a version this jar serves
   * (or {@link #ALLOW_UNTESTED_PROPERTY} is set) and `repository` implements its interface.
   */
  static void requireSupported(Class<?> repository) {
    String host = hostVersion();
    String served = servedVersions();
    boolean tested = List.of(served.split(",\\s*")).contains(host);
    if (!tested && !Boolean.getBoolean(ALLOW_UNTESTED_PROPERTY)) {
      throw new IllegalStateException(mismatch("this jar was not tested on it (the JVM system "
          + "property " + ALLOW_UNTESTED_PROPERTY + "=true starts it anyway)"));
    }
    requireImplemented(repository);
  }

  /**
   * Throws IllegalStateException when `repository` lacks a method the host's interface needs, or
   * names a ShardingSphere type the host does not have (reflecting on its methods then fails).
   */
  private static void requireImplemented(Class<?> repository) {
    for (Method needed : ClusterPersistRepository.class.getMethods()) {
      if (!Modifier.isAbstract(needed.getModifiers())) {
        continue; // a default method: the host's own
      }
      boolean implemented;
      try {
        implemented = implemented(repository, needed);
      } catch (LinkageError missing) {
        throw new IllegalStateException(mismatch("this jar's " + repository.getSimpleName()
            + " names " + missing.getMessage().replace('/', '.')
            + ", which this ShardingSphere does not have"), missing);
      }
      if (!implemented) {
        throw new IllegalStateException(mismatch("its ClusterPersistRepository needs "
            + needed.getName() + "(), which this jar does not implement"));
      }
    }
  }

  private static boolean implemented(Class<?> repository, Method needed) {
    try {
      Method found = repository.getMethod(needed.getName(), needed.getParameterTypes());
      return !Modifier.isAbstract(found.getModifiers())
          && needed.getReturnType().isAssignableFrom(found.getReturnType());
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  private static String mismatch(String detail) {
    Package ours = HostCheck.class.getPackage();
    String jar = ours.getImplementationTitle() == null ? "this jar" : ours.getImplementationTitle();
    return jar + " serves ShardingSphere " + servedVersions() + ", but this ShardingSphere is "
        + hostVersion() + ": " + detail + ". Put the registry-consul-for-shardingsphere jar of "
        + "your ShardingSphere version in ext-lib/ (and only that one); docs/shardingsphere.md "
        + "lists the supported versions.";
  }

  /** The versions this jar was built for, from its manifest (as the version module wrote it). */
  static String servedVersions() {
    // This class's own jar: the class loader's first manifest may be any jar's.
    String self = String.valueOf(HostCheck.class.getResource("HostCheck.class"));
    int inJar = self.indexOf("!/");
    if (!self.startsWith("jar:") || inJar < 0) {
      return "(unknown: not running from a jar)";
    }
    URL manifestUrl;
    try {
      manifestUrl = new URL(self.substring(0, inJar + 2) + "META-INF/MANIFEST.MF");
    } catch (java.net.MalformedURLException e) {
      return "(unknown: " + e.getMessage() + ")";
    }
    try (InputStream in = manifestUrl.openStream()) {
      Manifest manifest = new Manifest(in);
      String versions = manifest.getMainAttributes().getValue(VERSIONS_ATTRIBUTE);
      return versions != null
          ? versions
          : "(unknown: no " + VERSIONS_ATTRIBUTE + " in the manifest)";
    } catch (IOException e) {
      return "(unknown: the jar's manifest is unreadable)";
    }
  }

  /**
   * The running ShardingSphere's version: 5.5.3 writes it into shardingsphere-version.properties,
   * earlier versions into a generated class's VERSION constant.
   */
  static String hostVersion() {
    try (InputStream in =
        ClusterPersistRepository.class.getClassLoader().getResourceAsStream(
            "shardingsphere-version.properties")) {
      if (in != null) {
        Properties props = new Properties();
        props.load(in);
        String version = props.getProperty("version");
        if (version != null) {
          return version;
        }
      }
    } catch (IOException e) {
      // fall through to the older place
    }
    try {
      Class<?> generated = Class.forName(
          "org.apache.shardingsphere.infra.autogen.version.ShardingSphereVersion", false,
          ClusterPersistRepository.class.getClassLoader());
      return String.valueOf(generated.getField("VERSION").get(null));
    } catch (ReflectiveOperationException | LinkageError e) {
      return "of an unknown version";
    }
  }
}
