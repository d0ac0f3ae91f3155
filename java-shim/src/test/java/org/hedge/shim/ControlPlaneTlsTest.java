package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ControlPlaneTlsTest {
  @TempDir
  File dir;

  @Test
  void offUnlessAskedFor() throws IOException {
    assertNull(ControlPlaneTls.fromConf(new Configuration(false)));
  }

  /** A CA file that is missing or not PEM is one message naming the property and the file. */
  @Test
  void aBadCaFileIsNamed() throws IOException {
    Configuration conf = new Configuration(false);
    conf.setBoolean(HedgeConf.TLS, true);
    conf.set(HedgeConf.TLS_CA_FILE, new File(dir, "missing.pem").getPath());
    IOException missing = assertThrows(IOException.class, () -> ControlPlaneTls.fromConf(conf));
    assertTrue(missing.getMessage().startsWith("cannot read " + HedgeConf.TLS_CA_FILE + " = "),
        missing.getMessage());
    File junk = new File(dir, "junk.pem");
    Files.write(junk.toPath(), "not a certificate\n".getBytes(StandardCharsets.UTF_8));
    conf.set(HedgeConf.TLS_CA_FILE, junk.getPath());
    IOException notPem = assertThrows(IOException.class, () -> ControlPlaneTls.fromConf(conf));
    assertTrue(notPem.getMessage().contains(junk.getPath()), notPem.getMessage());
    assertTrue(notPem.getMessage().contains("BEGIN CERTIFICATE"), notPem.getMessage());
  }

  /**
   * A plain server (hedge serve without tls_cert closes a TLS client's connection at once) fails
   * the handshake with a message that names the server-side settings; reason() passes it on
   * through Py4J's wrapping.
   */
  @Test
  void aPlainServerFailsTheHandshakeByName() throws Exception {
    try (ServerSocket server = new ServerSocket()) {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      Thread peer = new Thread(() -> {
        try (Socket s = server.accept()) {
          s.getInputStream().read(); // the ClientHello's first byte, then close
        } catch (IOException ignored) {
          // the client gave up: fine
        }
      });
      peer.setDaemon(true);
      peer.start();
      Configuration conf = new Configuration(false);
      conf.setBoolean(HedgeConf.TLS, true);
      ControlPlaneTls tls = ControlPlaneTls.fromConf(conf);
      Socket plain = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
      IOException e = assertThrows(ControlPlaneTls.HandshakeException.class,
          () -> tls.wrap(plain, "127.0.0.1", server.getLocalPort(), 2000));
      assertTrue(e.getMessage().startsWith("TLS handshake with hedge serve at 127.0.0.1:"),
          e.getMessage());
      assertTrue(e.getMessage().contains("[server] tls_cert"), e.getMessage());
      assertTrue(plain.isClosed());
      Exception wrapped = new py4j.Py4JException("Error while obtaining a new communication "
          + "channel", e);
      assertEquals(e.getMessage(), ControlPlaneClient.reason(wrapped));
    }
  }

  /** What the server answered the token with decides the AM's message (Py4J hides it). */
  @Test
  void theAnswerToTheTokenNamesTheRefusal() {
    assertTrue(ControlPlaneClient.authRefusal("!xn").startsWith("wrong token: "));
    assertTrue(ControlPlaneClient.authRefusal(null).startsWith("wrong token: "));
    assertEquals("hedge serve refused the connection: this control plane requires TLS",
        ControlPlaneClient.authRefusal("!xhedge: this control plane requires TLS"));
    String closed = ControlPlaneClient.authRefusal("null");
    assertTrue(closed.startsWith("the server closed the connection before answering"), closed);
    assertTrue(ControlPlaneClient.authRefusal("HTTP/1.1 400 Bad Request")
        .contains(HedgeConf.ADDRESS));
  }
}
