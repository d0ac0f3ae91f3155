package org.hedge.imkp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.hedge.shim.ControlPlane;
import org.hedge.shim.ControlPlaneClient;
import org.hedge.shim.ControlPlaneTls;
import org.hedge.shim.HedgeConf;
import py4j.ClientServer;
import py4j.Py4JAuthenticationException;

/**
 * Fetches an ImKP mapping from `hedge serve` over Py4J ({@code hedge.imkp.mapping.fetch=NAME}).
 *
 * <p>The same settings as the speculator reach the control plane:
 * {@code hedge.controlplane.address} (host:port of its Py4J endpoint) and
 * {@code hedge.controlplane.token.file} (the shared token: a local path or a {@code -files}
 * link name). One gateway is opened, {@link ControlPlane#mapping} is called once and the
 * gateway is shut down: one round trip per task. The answer is either the mapping file's bytes
 * (parsed and checked here again by {@link ImkpMapping#parse}) or {@code "ERROR reason"}, the
 * server's refusal. Every failure is an IOException naming the setting, the address and what to
 * fix; the partitioner fails the task with it (never a hash fallback).
 */
final class ImkpFetch {
  /** Seconds-scale default: the server validates the file before answering. */
  static final int DEFAULT_TIMEOUT_MS = 30_000;
  private static final byte[] ERROR = "ERROR".getBytes(StandardCharsets.US_ASCII);

  private ImkpFetch() {}

  /** The mapping {@code name} from the control plane the configuration names. */
  static ImkpMapping fetch(Configuration conf, String name) throws IOException {
    String what = ImkpPartitioner.FETCH + "=" + name;
    String address = conf.getTrimmed(HedgeConf.ADDRESS, "");
    int port = HedgeConf.port(address);
    if (port < 0) {
      throw new IOException(what + ": " + HedgeConf.ADDRESS + " = '" + address + "' is not "
          + "host:port; set it to the Py4J address of 'hedge serve' (as for the speculator), "
          + "or ship the file and set " + ImkpPartitioner.MAPPING + " instead");
    }
    String host = HedgeConf.host(address);
    String tokenFile = conf.getTrimmed(HedgeConf.TOKEN_FILE, "");
    String token = readToken(tokenFile, what);
    int timeoutMs = conf.getInt(ImkpPartitioner.FETCH_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
    String from = "the control plane at " + address;
    byte[] answer;
    ClientServer gateway = null;
    try {
      gateway = ControlPlaneClient.gateway(host, port, token, timeoutMs,
          ControlPlaneTls.fromConf(conf));
      answer = ControlPlaneClient.entryPoint(gateway).mapping(name);
    } catch (RuntimeException e) {
      throw new IOException(what + ": " + unreachable(from, e, tokenFile), e);
    } finally {
      if (gateway != null) {
        gateway.shutdown();
      }
    }
    if (answer == null || answer.length == 0) {
      throw new IOException(what + ": " + from + " sent an empty answer; check that "
          + HedgeConf.ADDRESS + " names a 'hedge serve' of this hedge version");
    }
    if (startsWith(answer, ERROR)) {
      String reason = new String(answer, StandardCharsets.UTF_8).substring(ERROR.length).trim();
      throw new IOException(what + ": " + from + " refused it: " + reason);
    }
    return ImkpMapping.parse(answer, what + " (from " + from + ")");
  }

  private static String readToken(String path, String what) throws IOException {
    try {
      return HedgeConf.readToken(path);
    } catch (IOException e) {
      throw new IOException(what + ": " + e.getMessage(), e);
    }
  }

  /**
   * Why the call failed, and what to check: the token when Py4J's authentication failed (Py4J
   * 0.10.9 reports it as an IOException "Authentication with callback server unsuccessful.").
   */
  private static String unreachable(String from, Throwable e, String tokenFile) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof Py4JAuthenticationException || (t instanceof IOException
          && String.valueOf(t.getMessage()).startsWith("Authentication"))) {
        return from + " refused the token in " + HedgeConf.TOKEN_FILE + " = " + tokenFile
            + "; use the token file 'hedge serve --token-file' reads";
      }
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return "cannot fetch the mapping from " + from + " (" + ControlPlaneClient.describe(e)
        + (root != e ? "; " + ControlPlaneClient.describe(root) : "")
        + "); check that 'hedge serve' runs there with [imkp] mappings set, that "
        + HedgeConf.ADDRESS + " and " + HedgeConf.TOKEN_FILE + " match it, or ship the file "
        + "and set " + ImkpPartitioner.MAPPING + " instead";
  }

  private static boolean startsWith(byte[] data, byte[] prefix) {
    if (data.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (data[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }
}
