package org.hedge.cluster;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * Every node the ResourceManager knows, one line each: NODE, host, state, health report (tab
 * separated), asked over the RM's client RPC. (In MiniMRYarnCluster the RM's REST API answers
 * 404: its web apps share one JVM and Guice's static filter with the history server's.)
 * Usage: {@code NodeStates -conf cluster.xml}.
 */
public final class NodeStates extends Configured implements Tool {
  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new NodeStates(), args));
  }

  @Override
  public int run(String[] args) throws Exception {
    YarnClient client = YarnClient.createYarnClient();
    client.init(new YarnConfiguration(getConf()));
    client.start();
    try {
      for (NodeReport node : client.getNodeReports(NodeState.values())) {
        System.out.println("NODE\t" + node.getNodeId().getHost() + "\t" + node.getNodeState() + "\t"
            + node.getHealthReport().replace('\n', ' ').replace('\t', ' '));
      }
    } finally {
      client.stop();
    }
    return 0;
  }
}
