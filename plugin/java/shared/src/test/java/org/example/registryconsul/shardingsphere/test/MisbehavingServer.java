// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A server on 127.0.0.1 that takes connections and misbehaves on each: never answers, or
 * answers every request with an endless chunked body. One thread accepts, one serves each
 * connection; {@link #close} closes every socket and joins every thread.
 */
final class MisbehavingServer implements AutoCloseable {
  enum Behaviour {
    /** Reads what arrives and never answers. */
    SILENT,
    /** After a request's headers, a 200 whose chunked body never ends (1 MiB chunks). */
    ENDLESS_BODY
  }

  private final Behaviour behaviour;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final List<Socket> sockets = new ArrayList<>(); // guarded by this
  private final List<Thread> servers = new ArrayList<>(); // guarded by this

  MisbehavingServer(Behaviour behaviour) throws IOException {
    this.behaviour = behaviour;
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    acceptor = new Thread(this::acceptLoop, "misbehaving-server-accept");
    acceptor.start();
  }

  /** host:port for server-lists. */
  String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket socket = listener.accept();
        Thread server = new Thread(() -> serve(socket), "misbehaving-server-conn");
        synchronized (this) {
          sockets.add(socket);
          servers.add(server);
        }
        server.start();
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void serve(Socket socket) {
    try (InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
      if (behaviour == Behaviour.SILENT) {
        byte[] discard = new byte[4096];
        while (in.read(discard) >= 0) {
          // never answers
        }
        return;
      }
      readHeaders(in);
      out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
              + "X-Consul-Index: 7\r\nTransfer-Encoding: chunked\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = new byte[1 << 20];
      Arrays.fill(chunk, (byte) ' ');
      byte[] head = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
      byte[] tail = "\r\n".getBytes(StandardCharsets.US_ASCII);
      while (true) { // until the client hangs up (an IOException) or close()
        out.write(head);
        out.write(chunk);
        out.write(tail);
      }
    } catch (IOException gone) {
      // the client hung up, or close() closed the socket
    }
  }

  /** Reads up to the blank line that ends a request's headers. */
  private static void readHeaders(InputStream in) throws IOException {
    int matched = 0;
    byte[] end = {'\r', '\n', '\r', '\n'};
    for (int b; matched < end.length && (b = in.read()) >= 0; ) {
      matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
    }
  }

  /** Closes every socket and joins every thread (10 s each at most); keeps an interrupt. */
  @Override
  public void close() {
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    join(acceptor);
    List<Thread> toJoin;
    synchronized (this) {
      for (Socket socket : sockets) {
        try {
          socket.close();
        } catch (IOException ignored) {
          // closing anyway
        }
      }
      toJoin = new ArrayList<>(servers);
    }
    for (Thread server : toJoin) {
      join(server);
    }
  }

  private static void join(Thread thread) {
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
