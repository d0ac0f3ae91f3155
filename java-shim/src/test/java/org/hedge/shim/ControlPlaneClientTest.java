package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

class ControlPlaneClientTest {
  /**
   * Py4J 0.10.9.9's exception for a refused token (seen against hedge serve) is named; any
   * other failure names its root cause, which Py4J's own message hides.
   */
  @Test
  void aRefusedTokenIsNamedWithTheSettingToFix() {
    Exception refused = new py4j.Py4JException("Error while obtaining a new communication channel",
        new java.io.IOException("Authentication with callback server unsuccessful."));
    String reason = ControlPlaneClient.reason(refused);
    assertTrue(reason.startsWith("wrong token: "), reason);
    assertTrue(reason.contains(HedgeConf.TOKEN_FILE), reason);
    Exception down = new py4j.Py4JException("Error while obtaining a new communication channel",
        new java.net.ConnectException("Connection refused"));
    assertEquals("Py4JException: Error while obtaining a new communication channel "
        + "(ConnectException: Connection refused)", ControlPlaneClient.reason(down));
  }

  /**
   * A control plane that accepts the session and then never reads: the shim's write of a frame
   * larger than both socket buffers blocks, and only the watchdog can end it.
   */
  @Test
  void aWriteBlockedPastTheDeadlineIsCutByTheWatchdog() throws Exception {
    try (ServerSocket server = new ServerSocket()) {
      server.setReceiveBufferSize(4096);
      server.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      Thread peer = new Thread(() -> {
        try (Socket s = server.accept()) {
          new DataInputStream(s.getInputStream()).readFully(new byte[WireFormat.HELLO_BYTES]);
          OutputStream out = s.getOutputStream();
          out.write(new byte[] {'H', 'D', 'G', 'A', 0, 0, 0, 0});
          out.flush();
          Thread.sleep(10_000); // holds the connection, reads nothing
        } catch (Exception ignored) {
          // the client closed the connection: expected
        }
      });
      peer.setDaemon(true);
      peer.start();
      ControlPlaneClient client = new ControlPlaneClient("127.0.0.1", 1, "token", 200, 5000,
          5000, null);
      ControlPlaneClient.Session session = new ControlPlaneClient.Session(1, new byte[16],
          server.getLocalPort());
      Scan scan = new Scan(16);
      scan.seq = 1;
      scan.nMaps = 1;
      ByteBuffer frame = ByteBuffer.allocate(32 << 20); // far more than the socket buffers
      long t0 = System.nanoTime();
      Decision d = client.scan(session, scan, frame, "job_1", 0);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertNull(d);
      assertTrue(ms >= 200 && ms < 2000, ms + " ms"); // 1.5 deadlines, plus slack for a busy CI
      assertFalse(client.healthy());
      client.close();
    }
  }
}
