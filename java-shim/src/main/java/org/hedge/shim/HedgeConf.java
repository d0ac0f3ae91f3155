package org.hedge.shim;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

/** Configuration keys the shim reads (mapred-site.xml or the job's configuration). */
public final class HedgeConf {
  /** host:port of `hedge serve` (its Py4J endpoint). Unset: Hadoop-default speculation only. */
  public static final String ADDRESS = "hedge.controlplane.address";
  /** File holding the shared auth token (same file `hedge serve --token-file` reads). */
  public static final String TOKEN_FILE = "hedge.controlplane.token.file";
  /**
   * Speak TLS to `hedge serve` on both channels (default false); it must then run with
   * {@code [server] tls_cert} and {@code tls_key}. The server's certificate must name the host of
   * {@link #ADDRESS} and be trusted by {@link #TLS_CA_FILE}, else {@link #TLS_TRUSTSTORE}, else
   * the JVM's default trust store. Any mismatch fails the handshake: logged once, Hadoop-default
   * speculation until it is fixed.
   */
  public static final String TLS = "hedge.controlplane.tls";
  /** PEM file of the CA certificate(s) (or the server's self-signed certificate) to trust. */
  public static final String TLS_CA_FILE = "hedge.controlplane.tls.ca.file";
  /** Java trust store (JKS or PKCS12, as keytool -import writes it) used when no CA file is set. */
  public static final String TLS_TRUSTSTORE = "hedge.controlplane.tls.truststore";
  /** Password of {@link #TLS_TRUSTSTORE} (empty: none; a trust store needs none to be read). */
  public static final String TLS_TRUSTSTORE_PASSWORD = "hedge.controlplane.tls.truststore.password";
  /** Per-call deadline: a scan answered later than this is decided by the fallback. */
  public static final String DEADLINE_MS = "hedge.controlplane.deadline.ms";
  public static final int DEFAULT_DEADLINE_MS = 200;
  /** Back-off after a failure (doubles up to the maximum) before the control plane is retried. */
  public static final String BACKOFF_INITIAL_MS = "hedge.controlplane.backoff.initial.ms";
  public static final long DEFAULT_BACKOFF_INITIAL_MS = 1000;
  public static final String BACKOFF_MAX_MS = "hedge.controlplane.backoff.max.ms";
  public static final long DEFAULT_BACKOFF_MAX_MS = 30000;
  /** Policy name (`hedge policies`); empty: the server's default. Parameters: hedge.FAMILY.*. */
  public static final String POLICY = "hedge.policy";
  /** Job deadline in milliseconds after the job start (QoS for deadline-aware policies). */
  public static final String JOB_DEADLINE_MS = "hedge.deadline.ms";
  /** Default period between scans when the policy does not ask for another delay. */
  public static final String SCAN_INTERVAL_MS = "hedge.scan.interval.ms";
  public static final long DEFAULT_SCAN_INTERVAL_MS = 1000;
  /** Apply Hadoop's mapreduce.job.speculative.* caps to the policy's copies (default true). */
  public static final String ENFORCE_CAPS = "hedge.caps.enforce";
  /**
   * Move a copy that launched on the NodeManager of another live attempt of its task (default
   * false): kill it so that the AM asks for its new attempt's container on any node
   * ({@link CopyPlacement}, which says why it is off by default).
   */
  public static final String PLACEMENT_MOVE = "hedge.placement.move";
  /** At most this many moves of one task's copies; then the copy stays where it launched. */
  public static final String PLACEMENT_MAX_MOVES = "hedge.placement.max.moves";
  public static final int DEFAULT_PLACEMENT_MAX_MOVES = 2;
  /** Run the periodic scan thread (harnesses turn it off and call scanOnce()). */
  public static final String BACKGROUND_SCANS = "hedge.speculator.background";
  /** Directory where every request/response frame is written (debugging, replay tests). */
  public static final String RECORD_DIR = "hedge.debug.record.dir";

  private HedgeConf() {}

  /**
   * The port of a {@code host:port} address ({@link #ADDRESS}), or -1 when it is not one: no
   * colon, nothing before the last colon, or not a port in 1..65535 after it.
   */
  public static int port(String address) {
    int colon = address.lastIndexOf(':');
    if (colon <= 0) {
      return -1;
    }
    try {
      int port = Integer.parseInt(address.substring(colon + 1));
      return port > 0 && port < 65536 ? port : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The host of an address {@link #port} accepts: everything before the last colon. */
  public static String host(String address) {
    return address.substring(0, address.lastIndexOf(':'));
  }

  /**
   * The shared auth token: the text of the {@link #TOKEN_FILE} file at {@code path}, trimmed.
   *
   * @throws IOException naming the property, its value and the fix when the path is empty, the
   *     file cannot be read (from this JVM's working directory) or holds no token
   */
  public static String readToken(String path) throws IOException {
    if (path.isEmpty()) {
      throw new IOException(TOKEN_FILE + " is not set; set it to the file holding the token "
          + "'hedge serve --token-file' reads (a local path or a -files link name)");
    }
    String token;
    try {
      token = new String(Files.readAllBytes(new File(path).toPath()), StandardCharsets.UTF_8)
          .trim();
    } catch (IOException e) {
      throw new IOException("cannot read " + TOKEN_FILE + " = " + path + " (" + e + ") in "
          + new File(".").getAbsoluteFile().getParent() + "; give a path readable on every "
          + "node by the user YARN containers run as, or ship the token with -files and name "
          + "its link", e);
    }
    if (token.isEmpty()) {
      throw new IOException(TOKEN_FILE + " = " + path + " is empty; expected the token "
          + "'hedge serve --token-file' reads");
    }
    return token;
  }

  /**
   * The configuration prefix of a policy's parameters: chronos-restart -> "hedge.chronos.",
   * hedge's own hedge-auto -> "hedge.auto." (hedge.policy.params.policy_family in Python).
   */
  public static String paramPrefix(String policy) {
    String name = policy.startsWith("hedge-") ? policy.substring("hedge-".length()) : policy;
    int dash = name.indexOf('-');
    return "hedge." + (dash < 0 ? name : name.substring(0, dash)) + ".";
  }
}
