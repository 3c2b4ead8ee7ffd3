// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads the glue library once per JVM, on the first repository's init (never in a constructor or
 * static initialiser: ShardingSphere constructs every repository provider on each lookup, and a
 * failure there would break the loading of every repository type). First from {@code
 * java.library.path}; else the copies inside this jar ({@code META-INF/native/linux-x86_64/}: the
 * glue and the Consul plugin) are extracted into a private temporary directory and loaded from
 * there, where the glue then finds the plugin beside itself.
 */
final class NativeLibrary {
  static final String GLUE = "registry_consul_jni";
  private static final String JAR_DIR = "/META-INF/native/linux-x86_64/";
  private static final String[] JAR_FILES = {"lib" + GLUE + ".so", "libregistry_consul.so"};

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
      Path dir = Files.createTempDirectory("registry-consul-jni-");
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
