package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** The ResourceManager's web address travels with the policy parameters, as Hadoop's own
 * clients resolve it from the AM's configuration. */
class ResourceManagerAddressTest {
  private static Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set("yarn.resourcemanager.hostname", "rm.example");
    return conf;
  }

  @Test
  void theWebAddressFollowsTheRmHostnameAndHttpPolicy() {
    Configuration conf = conf();
    // yarn-default.xml's webapp address is ${yarn.resourcemanager.hostname}:8088
    conf.set("yarn.resourcemanager.webapp.address", "${yarn.resourcemanager.hostname}:8088");
    assertEquals("resourcemanager=http://rm.example:8088\n",
        ResourceManagerAddress.params(conf));
    conf.set("yarn.resourcemanager.webapp.address", "rm-web.example:18088");
    assertEquals("resourcemanager=http://rm-web.example:18088\n",
        ResourceManagerAddress.params(conf));
    conf.set("yarn.http.policy", "HTTPS_ONLY");
    conf.set("yarn.resourcemanager.webapp.https.address", "rm-web.example:18090");
    assertEquals("resourcemanager=https://rm-web.example:18090\n",
        ResourceManagerAddress.params(conf));
  }

  @Test
  void withHaTheFirstRmIdIsSent() {
    Configuration conf = conf();
    conf.setBoolean("yarn.resourcemanager.ha.enabled", true);
    conf.set("yarn.resourcemanager.ha.rm-ids", "rm1,rm2");
    conf.set("yarn.resourcemanager.webapp.address.rm1", "rm-a.example:8088");
    conf.set("yarn.resourcemanager.webapp.address.rm2", "rm-b.example:8088");
    assertEquals("resourcemanager=http://rm-a.example:8088\n",
        ResourceManagerAddress.params(conf));
  }

  @Test
  void aLoopbackRmIsSentAsConfiguredAndAWildcardAsThisHost() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set("yarn.resourcemanager.webapp.address", "127.0.0.1:8088");
    assertEquals("resourcemanager=http://127.0.0.1:8088\n",
        ResourceManagerAddress.params(conf));
    conf.set("yarn.resourcemanager.webapp.address", "0.0.0.0:8088");
    assertEquals("resourcemanager=http://"
        + java.net.InetAddress.getLocalHost().getCanonicalHostName() + ":8088\n",
        ResourceManagerAddress.params(conf));
  }

  @Test
  void anOlderServersRefusalOfTheAddressSaysToUpgradeIt() {
    String old = "hedge.window.resourcemanager: policy 'window' has no parameter "
        + "'resourcemanager' (accepted: window, window.seconds)";
    assertEquals(old + "; that 'hedge serve' is older than this hedge-shim jar, which sends "
        + "the ResourceManager's address: upgrade the control plane",
        ControlPlaneClient.explainRefusal(old));
    String other = "policy 'nope' is not allowed on this server";
    assertEquals(other, ControlPlaneClient.explainRefusal(other));
  }

  @Test
  void aMalformedAddressSendsNone() {
    Configuration conf = conf();
    conf.set("yarn.resourcemanager.webapp.address", "rm.example:port");
    assertEquals("", ResourceManagerAddress.params(conf));
  }
}
