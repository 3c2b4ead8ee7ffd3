// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A Worker in a JVM of its own, with this JVM's class path, library path and test properties. */
final class WorkerProcess implements AutoCloseable {
  private final Process process;
  private final LinkedBlockingQueue<String> protocolLines = new LinkedBlockingQueue<>();
  private final StringBuffer output = new StringBuffer();  // everything, for failure messages
  private final Thread reader;

  WorkerProcess(String... args) throws IOException {
    this(System.getProperty("java.class.path"), List.of(args));
  }

  /** A Worker on another class path (the same JVM, library path and test properties). */
  static WorkerProcess onClassPath(String classPath, String... args) throws IOException {
    return new WorkerProcess(classPath, List.of(args));
  }

  private WorkerProcess(String classPath, List<String> args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Djava.library.path=" + System.getProperty("java.library.path", ""));
    for (Map.Entry<Object, Object> each : System.getProperties().entrySet()) {
      String name = String.valueOf(each.getKey());
      if (name.startsWith(TestServer.PROPERTY_PREFIX)) {
        command.add("-D" + name + "=" + each.getValue());
      }
    }
    command.add("-cp");
    command.add(classPath);
    command.add(Worker.class.getName());
    command.addAll(args);
    process = new ProcessBuilder(command).redirectErrorStream(true).start();
    reader = new Thread(this::readOutput, "worker-output-" + process.pid());
    reader.setDaemon(true);
    reader.start();
  }

  private void readOutput() {
    try (BufferedReader lines = new BufferedReader(
             new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        output.append(line).append('\n');
        if (line.startsWith("@")) {
          protocolLines.add(line.substring(1));
        }
      }
    } catch (IOException ended) {
      // the process is gone; output() has what it printed
    }
  }

  /** The next protocol line, failing (with the worker's output) after `timeout`. */
  String next(Duration timeout) throws InterruptedException {
    String line = protocolLines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (line == null) {
      throw new AssertionError("worker said nothing within " + timeout.toMillis()
          + " ms; alive " + process.isAlive() + "; output:\n" + output());
    }
    return line;
  }

  void send(String line) throws IOException {
    OutputStream stdin = process.getOutputStream();
    stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
  }

  void closeStdin() throws IOException {
    process.getOutputStream().close();
  }

  /** SIGKILL, then waits for the process to be gone. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      throw new AssertionError("the killed worker is still alive");
    }
  }

  /** Waits for the exit code. */
  int waitFor(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("worker still running after " + timeout.toMillis() + " ms; output:\n"
          + output());
    }
    return process.exitValue();
  }

  String output() {
    return output.toString();
  }

  /** Kills the worker if it still runs: a failed test leaves no JVM behind. */
  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
      reader.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
