package org.hedge.imkp;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** hedge.imkp.mapping.fetch failures that need no control plane (the rest: integration). */
class ImkpFetchTest {

  static Configuration fetchConf(String address, String tokenFile) {
    Configuration conf = new Configuration(false);
    conf.set(ImkpPartitioner.FETCH, "job.imkp");
    if (address != null) {
      conf.set("hedge.controlplane.address", address);
    }
    if (tokenFile != null) {
      conf.set("hedge.controlplane.token.file", tokenFile);
    }
    conf.setInt(ImkpPartitioner.FETCH_TIMEOUT_MS, 2000);
    return conf;
  }

  static String failure(Configuration conf) {
    return assertThrows(IOException.class, () -> ImkpPartitioner.load(conf)).getMessage();
  }

  @Test
  void missingOrBadSettingsNameTheKeyAndTheFix() throws IOException {
    String msg = failure(fetchConf(null, null));
    assertTrue(msg.startsWith("hedge.imkp.mapping.fetch=job.imkp: hedge.controlplane.address "
        + "= '' is not host:port"), msg);
    assertTrue(failure(fetchConf("localhost", null)).contains("'localhost' is not host:port"));
    assertTrue(failure(fetchConf("h:99999", null)).contains("'h:99999' is not host:port"));
    msg = failure(fetchConf("127.0.0.1:1", null));
    assertTrue(msg.contains("hedge.controlplane.token.file is not set"), msg);
    msg = failure(fetchConf("127.0.0.1:1", "/no/such/token"));
    assertTrue(msg.contains("cannot read hedge.controlplane.token.file = /no/such/token"), msg);
  }

  @Test
  void anUnreachableControlPlaneFailsWithTheAddress() throws IOException {
    File token = Files.createTempFile("hedge-token", "").toFile();
    token.deleteOnExit();
    Files.write(token.toPath(), "0123456789abcdef-token".getBytes(StandardCharsets.UTF_8));
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there now
    }
    String msg = failure(fetchConf("127.0.0.1:" + port, token.getPath()));
    assertTrue(msg.startsWith("hedge.imkp.mapping.fetch=job.imkp: cannot fetch the mapping from "
        + "the control plane at 127.0.0.1:" + port + " ("), msg);
    assertTrue(msg.contains("check that 'hedge serve' runs there with [imkp] mappings set"), msg);
  }

  @Test
  void theFileWinsWhenBothAreSet() throws IOException {
    Configuration conf = fetchConf(null, null); // fetching would fail: no address
    conf.set(ImkpPartitioner.MAPPING, ImkpMappingTest.SMALL.toAbsolutePath().toString());
    assertTrue(ImkpPartitioner.load(conf).reducers() == 7);
  }
}
