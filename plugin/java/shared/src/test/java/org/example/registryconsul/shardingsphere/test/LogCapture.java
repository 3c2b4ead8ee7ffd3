// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The bridge's log records while open. The bridge logs through System.Logger, which the JDK sends
 * to java.util.logging (there is no other logging provider on the tests' class path).
 */
final class LogCapture extends Handler implements AutoCloseable {
  private static final String BRIDGE_LOGGER = "org.example.registryconsul.shardingsphere";

  // Held here: java.util.logging keeps loggers weakly, and a collected logger loses its handler.
  private final Logger logger = Logger.getLogger(BRIDGE_LOGGER);
  private final List<LogRecord> records = new ArrayList<>();

  LogCapture() {
    setLevel(Level.ALL);
    logger.addHandler(this);
  }

  @Override
  public synchronized void publish(LogRecord record) {
    records.add(record);
  }

  /** True if a record at `level` or above mentions `text` in its message or its exception. */
  synchronized boolean logged(Level level, String text) {
    for (LogRecord each : records) {
      String thrown = each.getThrown() == null ? "" : String.valueOf(each.getThrown());
      if (each.getLevel().intValue() >= level.intValue()
          && (String.valueOf(each.getMessage()).contains(text) || thrown.contains(text))) {
        return true;
      }
    }
    return false;
  }

  synchronized String describe() {
    StringBuilder text = new StringBuilder();
    for (LogRecord each : records) {
      text.append(each.getLevel()).append(' ').append(each.getMessage()).append('\n');
    }
    return text.toString();
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    logger.removeHandler(this);
  }
}
