// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Loads the glue library once per JVM, on the first repository's init (never in a constructor or
 * static initialiser: ShardingSphere constructs every repository provider on each lookup, and a
 * failure there would break the loading of every repository type). First from {@code
 * java.library.path}; else the copies inside this jar ({@code META-INF/native/linux-x86_64/}: the
 * glue and the Consul plugin) are extracted into a private temporary directory and loaded from
 * there, where the glue then finds the plugin beside itself.
 *
 * <p>That directory is named after the JVM's process id ({@code registry-consul-jni-<pid>-...}) and
 * removed when the JVM exits normally. A JVM that is killed leaves it behind: each extraction first
 * removes such directories of this user older than ten minutes whose process no longer runs, so
 * stale copies do not pile up.
 */
final class NativeLibrary {
  static final String GLUE = "registry_consul_jni";
  private static final String JAR_DIR = "/META-INF/native/linux-x86_64/";
  private static final String[] JAR_FILES = {"lib" + GLUE + ".so", "libregistry_consul.so"};
  static final String DIR_PREFIX = "registry-consul-jni-";
  static final Duration STALE_AFTER = Duration.ofMinutes(10);

  private static boolean loaded; // guarded by NativeLibrary.class

  private NativeLibrary() {}

  /** Loads the glue if not yet loaded; the error says where it looked. */
  static synchronized void load() {
    if (loaded) {
      return;
    }
    try {
      System.loadLibrary(GLUE);
    } catch (UnsatisfiedLinkError notOnPath) {
      System.load(extract(notOnPath).resolve(JAR_FILES[0]).toString());
    }
    loaded = true;
  }

  private static Path extract(UnsatisfiedLinkError notOnPath) {
    String platform = System.getProperty("os.name") + "/" + System.getProperty("os.arch");
    if (!platform.equals("Linux/amd64")) {
      throw new UnsatisfiedLinkError(
          "lib" + GLUE + ".so is not on java.library.path (" + notOnPath.getMessage()
              + ") and this jar carries it for Linux/amd64 only, not " + platform);
    }
    try {
      Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
      removeStaleCopies(tmp);
      Path dir = Files.createTempDirectory(tmp, DIR_PREFIX + ProcessHandle.current().pid() + "-");
      dir.toFile().deleteOnExit();
      for (String name : JAR_FILES) {
        try (InputStream in = NativeLibrary.class.getResourceAsStream(JAR_DIR + name)) {
          if (in == null) {
            throw new UnsatisfiedLinkError(
                "lib" + GLUE + ".so is not on java.library.path and the jar lacks " + JAR_DIR
                    + name);
          }
          Path file = dir.resolve(name);
          Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
          file.toFile().deleteOnExit();
        }
      }
      return dir;
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("extracting the native libraries of the jar: " + e);
    }
  }

  /**
   * Removes the directories {@code registry-consul-jni-<pid>-*} in {@code tmp} of this user,
   * last modified over {@link #STALE_AFTER} ago, whose process no longer runs (a JVM killed
   * before its exit hooks ran). Anything else is left alone (a live process's, a recent one, a
   * name without a process id, a symbolic link), and what cannot be removed is skipped: cleaning
   * up never stops a load. Returns how many directories were removed.
   */
  static int removeStaleCopies(Path tmp) {
    int removed = 0;
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, DIR_PREFIX + "*")) {
      UserPrincipal me =
          tmp.getFileSystem()
              .getUserPrincipalLookupService()
              .lookupPrincipalByName(System.getProperty("user.name"));
      for (Path dir : dirs) {
        long pid = ownerPid(dir.getFileName().toString());
        // Only a real directory of this user (never a link someone else planted in /tmp), and
        // not a recent one: a JVM in another PID namespace sharing this /tmp (whose pid this
        // JVM cannot see) has loaded both libraries long before STALE_AFTER, and a loaded
        // library's file may go.
        if (pid <= 0 || ProcessHandle.of(pid).isPresent()
            || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
            || !Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).equals(me)
            || Files.getLastModifiedTime(dir, LinkOption.NOFOLLOW_LINKS).toInstant()
                .isAfter(Instant.now().minus(STALE_AFTER))) {
          continue;
        }
        if (removeTree(dir)) {
          removed++;
        }
      }
    } catch (IOException | RuntimeException e) {
      // Cleaning up is a courtesy: never a reason not to load.
    }
    return removed;
  }

  /** The process id in {@code registry-consul-jni-<pid>-<random>}, or -1. */
  private static long ownerPid(String name) {
    String rest = name.substring(DIR_PREFIX.length());
    int dash = rest.indexOf('-');
    if (dash <= 0) {
      return -1;
    }
    try {
      return Long.parseLong(rest.substring(0, dash));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static boolean removeTree(Path dir) {
    try (Stream<Path> tree = Files.walk(dir)) {
      for (Path path : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(path);
      }
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** The directories of java.library.path, where the glue also looks for the plugin. */
  static byte[][] libraryPathDirs() {
    String path = System.getProperty("java.library.path", "");
    String[] dirs = path.isEmpty() ? new String[0] : path.split(java.io.File.pathSeparator);
    byte[][] result = new byte[dirs.length][];
    for (int i = 0; i < dirs.length; i++) {
      result[i] = Utf8.encode(dirs[i], "java.library.path entry");
    }
    return result;
  }
}
