// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.shardingsphere.mode.event.DataChangedEvent;
import org.apache.shardingsphere.mode.repository.cluster.listener.DataChangedEventListener;

/** A listener that queues every event it gets and remembers the threads that called it. */
final class EventRecorder implements DataChangedEventListener {
  private final LinkedBlockingQueue<DataChangedEvent> events = new LinkedBlockingQueue<>();
  private final List<Thread> callingThreads = new ArrayList<>();
  private final AtomicInteger calls = new AtomicInteger();

  @Override
  public void onChange(DataChangedEvent event) {
    calls.incrementAndGet();
    synchronized (callingThreads) {
      callingThreads.add(Thread.currentThread());
    }
    events.add(event);
  }

  /** Calls started so far. */
  int calls() {
    return calls.get();
  }

  List<Thread> callingThreads() {
    synchronized (callingThreads) {
      return new ArrayList<>(callingThreads);
    }
  }

  /** The next event, failing after `timeout` without one. */
  DataChangedEvent next(Duration timeout) throws InterruptedException {
    DataChangedEvent event = events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (event == null) {
      throw new AssertionError("no event within " + timeout.toMillis() + " ms");
    }
    return event;
  }

  /** Events queued now, without waiting. */
  List<DataChangedEvent> drain() {
    List<DataChangedEvent> drained = new ArrayList<>();
    events.drainTo(drained);
    return drained;
  }

  static String describe(DataChangedEvent event) {
    return event.getType() + " " + event.getKey() + "=" + event.getValue();
  }
}
