// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The copies of the native libraries that killed JVMs leave in the temporary directory are
 * removed by the next extraction, and nothing else is: not a live JVM's, not a recent one, not
 * one without a process id, not a link to somewhere else.
 */
@Timeout(60)
class NativeLibraryTest {
  private static final FileTime OLD =
      FileTime.from(Instant.now().minus(NativeLibrary.STALE_AFTER).minusSeconds(60));

  @TempDir Path tmp;

  /** A process id that no longer runs: that of a process that has exited. */
  private static long deadPid() throws IOException, InterruptedException {
    Process process = new ProcessBuilder("true").start();
    process.waitFor();
    return process.pid();
  }

  /** A directory `name` in tmp holding the two libraries' names, modified at `when`. */
  private Path copyDir(String name, FileTime when) throws IOException {
    Path dir = Files.createDirectory(tmp.resolve(name));
    Files.write(dir.resolve("libregistry_consul_jni.so"), new byte[] {1});
    Files.write(dir.resolve("libregistry_consul.so"), new byte[] {2});
    Files.setLastModifiedTime(dir, when);
    return dir;
  }

  @Test
  void onlyOldCopiesOfProcessesThatNoLongerRunAreRemoved() throws Exception {
    long dead = deadPid();
    long self = ProcessHandle.current().pid();
    Path stale = copyDir(NativeLibrary.DIR_PREFIX + dead + "-1234", OLD);
    Path recent = copyDir(NativeLibrary.DIR_PREFIX + dead + "-5678", FileTime.from(Instant.now()));
    Path live = copyDir(NativeLibrary.DIR_PREFIX + self + "-9012", OLD);
    Path unnamed = copyDir(NativeLibrary.DIR_PREFIX + "abc", OLD);
    Path other = copyDir("other-" + dead + "-1", OLD);
    // A link named as a stale copy, pointing at a directory that must survive.
    Path target = copyDir("target", OLD);
    Path link =
        Files.createSymbolicLink(tmp.resolve(NativeLibrary.DIR_PREFIX + dead + "-link"), target);
    Files.getFileAttributeView(link, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setTimes(OLD, OLD, OLD);

    assertEquals(1, NativeLibrary.removeStaleCopies(tmp));

    assertFalse(Files.exists(stale, LinkOption.NOFOLLOW_LINKS), "the stale copy is removed");
    for (Path kept : new Path[] {recent, live, unnamed, other, link}) {
      assertTrue(Files.exists(kept, LinkOption.NOFOLLOW_LINKS), kept + " is kept");
    }
    assertTrue(Files.exists(target.resolve("libregistry_consul.so")), "the link's target is kept");
  }

  @Test
  void aMissingTemporaryDirectoryIsNoError() {
    assertEquals(0, NativeLibrary.removeStaleCopies(tmp.resolve("missing")));
  }
}
