// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere.test;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The test's own look at the server, past the bridge, with the admin token: which session holds
 * a key, whether a session still exists; and the end of a session, as Consul ends one. Plain HTTP
 * only (the consul-tls server wants a client certificate Java cannot read from the test's PEM
 * files without more code than it is worth).
 */
final class AdminConsul {
  private static final Pattern SESSION = Pattern.compile("\"Session\"\\s*:\\s*\"([^\"]+)\"");
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private AdminConsul() {}

  /** False for consul-tls, where the test cannot call the server itself. */
  static boolean available() {
    return !TestServer.serverLists().startsWith("https://");
  }

  private static String get(String path) throws IOException, InterruptedException {
    return send("GET", path);
  }

  private static String send(String method, String path)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://" + TestServer.serverLists() + path))
            .timeout(Duration.ofSeconds(5))
            .method(method, HttpRequest.BodyPublishers.noBody());
    String token = System.getProperty(TestServer.PROPERTY_PREFIX + "adminToken", "");
    if (!token.isEmpty()) {
      request.header("X-Consul-Token", token);
    }
    HttpResponse<String> response =
        CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    if (response.statusCode() == 404) {
      return "";
    }
    if (response.statusCode() != 200) {
      throw new IOException(
          method + " " + path + ": " + response.statusCode() + " " + response.body());
    }
    return response.body();
  }

  /**
   * The session holding the Consul key of `key` in `namespace` ("namespace" + "/key" with its
   * leading '/'), "" when the key is absent or held by none.
   */
  static String keySession(String namespace, String key) throws IOException, InterruptedException {
    String body = get("/v1/kv/" + namespace + key + "?consistent");
    Matcher matcher = SESSION.matcher(body);
    return matcher.find() ? matcher.group(1) : "";
  }

  /** Ends session `id` as Consul does when it invalidates a session (its keys go at once). */
  static void destroySession(String id) throws IOException, InterruptedException {
    send("PUT", "/v1/session/destroy/" + URLEncoder.encode(id, StandardCharsets.UTF_8));
  }

  /** Whether session `id` exists on the server. */
  static boolean sessionExists(String id) throws IOException, InterruptedException {
    String body = get("/v1/session/info/" + URLEncoder.encode(id, StandardCharsets.UTF_8));
    return body.contains("\"ID\"");
  }
}
