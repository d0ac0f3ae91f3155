package org.hedge.shim;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Collection;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * The ResourceManager's web address as the AM's configuration names it, sent to hedge serve
 * with the policy parameters (key {@link #PARAM}): the server counts the job's free slots and
 * node utilisation from the RM's REST API (a speculator's AppContext shows neither), unless
 * its own [cluster] resourcemanager names an RM.
 *
 * <p>Resolved as the RM serves it: yarn.http.policy HTTPS_ONLY picks the https address;
 * with HA the first id of yarn.resourcemanager.ha.rm-ids (a standby RM redirects REST calls
 * to the active one); an address left unset follows yarn.resourcemanager.hostname (as
 * yarn-default.xml does); a wildcard host (0.0.0.0, the default hostname, which only a
 * one-host cluster runs with) becomes this host's name. Host names are sent as configured,
 * not resolved: Hadoop's WebAppUtils would turn a loopback address into this host's name,
 * which an RM bound to the loopback interface does not answer on.
 */
final class ResourceManagerAddress {
  private static final Log LOG = LogFactory.getLog(ResourceManagerAddress.class);

  /** The parameter's key, which hedge serve splits off (hedge.server.session). */
  static final String PARAM = "resourcemanager";

  private ResourceManagerAddress() {
  }

  /** {@code resourcemanager=<url>\n}, or "" when the configuration names no usable address. */
  static String params(Configuration conf) {
    try {
      return PARAM + "=" + url(conf) + "\n";
    } catch (IllegalArgumentException | UnknownHostException e) {
      LOG.warn("hedge: no ResourceManager web address sent to the control plane: " + e);
      return "";
    }
  }

  /** http(s)://host:port of the RM's web app. */
  static String url(Configuration conf) throws UnknownHostException {
    boolean https = "HTTPS_ONLY".equals(conf.getTrimmed(YarnConfiguration.YARN_HTTP_POLICY_KEY));
    String key = https ? YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS
        : YarnConfiguration.RM_WEBAPP_ADDRESS;
    int port = https ? YarnConfiguration.DEFAULT_RM_WEBAPP_HTTPS_PORT
        : YarnConfiguration.DEFAULT_RM_WEBAPP_PORT;
    String suffix = haSuffix(conf);
    String address = conf.getTrimmed(key + suffix);
    if (address == null || address.isEmpty()) {
      address = conf.getTrimmed(YarnConfiguration.RM_HOSTNAME + suffix, "0.0.0.0") + ":" + port;
    }
    InetSocketAddress parsed = NetUtils.createSocketAddr(address, port, key + suffix);
    String host = parsed.getHostString();
    if ("0.0.0.0".equals(host)) {
      host = InetAddress.getLocalHost().getCanonicalHostName();
    }
    return (https ? "https://" : "http://") + host + ":" + parsed.getPort();
  }

  /** ".rm1" (the first RM id) with HA on, else "". */
  private static String haSuffix(Configuration conf) {
    if (!conf.getBoolean(YarnConfiguration.RM_HA_ENABLED,
        YarnConfiguration.DEFAULT_RM_HA_ENABLED)) {
      return "";
    }
    Collection<String> ids = conf.getTrimmedStringCollection(YarnConfiguration.RM_HA_IDS);
    return ids.isEmpty() ? "" : "." + ids.iterator().next();
  }
}
