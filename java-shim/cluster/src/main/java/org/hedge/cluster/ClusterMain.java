package org.hedge.cluster;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.mapreduce.v2.jobhistory.JHAdminConfig;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * A real YARN cluster in one process, for hedge's cluster tests: a ResourceManager, N
 * NodeManagers and a JobHistoryServer ({@link MiniMRYarnCluster}), optionally HDFS
 * ({@link MiniDFSCluster}). The daemons share this JVM; every container they launch (the
 * MRAppMaster and each task) is a JVM of its own, started by the NodeManager.
 *
 * <p>Usage: {@code ClusterMain --dir DIR [--nodemanagers N] [--dfs]
 * [--health-script PATH --health-interval-ms MS]}. It runs with DIR as its working directory
 * (the mini cluster keeps its files under {@code DIR/target}), writes the client configuration
 * to {@code DIR/cluster.xml}, prints {@code READY DIR/cluster.xml} and runs until its standard
 * input closes or reads {@code stop}.
 */
public final class ClusterMain {
  /** Each NodeManager's memory for containers: room for an AM and several small tasks. */
  static final int NODE_MEMORY_MB = 3072;
  /** Container sizes: small, so two cores and two NodeManagers run a whole job at once. */
  static final int AM_MEMORY_MB = 512;
  static final int TASK_MEMORY_MB = 256;

  private ClusterMain() {}

  public static void main(String[] args) throws Exception {
    Options options = Options.parse(args);
    Configuration conf = configure(options);
    MiniDFSCluster dfs = null;
    if (options.dfs) {
      dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build();
      dfs.waitActive();
      conf.set("fs.defaultFS", dfs.getFileSystem().getUri().toString());
    }
    MiniMRYarnCluster yarn = new MiniMRYarnCluster("hedge", options.nodeManagers);
    yarn.init(conf);
    yarn.start();
    File confFile = new File(options.dir, "cluster.xml");
    writeConf(yarn.getConfig(), confFile);
    System.out.println("READY " + confFile.getAbsolutePath());
    System.out.flush();
    waitForStop();
    yarn.stop();
    if (dfs != null) {
      dfs.shutdown();
    }
    System.out.println("STOPPED");
    System.out.flush();
  }

  /** The cluster's settings: small containers, quick heartbeats, history under DIR. */
  static Configuration configure(Options options) {
    Configuration conf = new YarnConfiguration();
    conf.setInt(YarnConfiguration.NM_PMEM_MB, NODE_MEMORY_MB);
    conf.setInt(YarnConfiguration.NM_VCORES, 8);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    // A JVM's resident size overshoots -Xmx; these tests are not about memory enforcement.
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 250);
    conf.setInt(MRJobConfig.MR_AM_TO_RM_HEARTBEAT_INTERVAL_MS, 250);
    // Progress reaches the AM (and its speculator) twice a second instead of every 3 s.
    conf.setLong(MRJobConfig.TASK_PROGRESS_REPORT_INTERVAL, 500);
    String opens = java17Opens();
    conf.setInt(MRJobConfig.MR_AM_VMEM_MB, AM_MEMORY_MB);
    conf.set(MRJobConfig.MR_AM_COMMAND_OPTS, "-Xmx384m " + opens);
    conf.setInt(MRJobConfig.MAP_MEMORY_MB, TASK_MEMORY_MB);
    conf.setInt(MRJobConfig.REDUCE_MEMORY_MB, TASK_MEMORY_MB);
    conf.set(MRJobConfig.MAP_JAVA_OPTS, "-Xmx200m " + opens);
    conf.set(MRJobConfig.REDUCE_JAVA_OPTS, "-Xmx200m " + opens);
    // The history lives on the default file system (MiniMRYarnCluster qualifies these paths
    // with it): DIR/history locally, /hedge/history on HDFS with --dfs.
    String history = options.dfs ? "/hedge/history"
        : new File(options.dir, "history").getAbsoluteFile().toURI().toString()
            .replaceAll("/$", "");
    conf.set(JHAdminConfig.MR_HISTORY_INTERMEDIATE_DONE_DIR, history + "/intermediate");
    conf.set(JHAdminConfig.MR_HISTORY_DONE_DIR, history + "/done");
    // mapreduce.jobhistory.jhist.format stays Hadoop 3's default, binary Avro, as on the
    // clusters hedge's users run: hedge reads the history the way they would.
    if (options.healthScript != null) {
      // The 2.x key names, which 3.x reads as its default script ("script") too.
      conf.set("yarn.nodemanager.health-checker.script.path", options.healthScript);
      conf.setLong("yarn.nodemanager.health-checker.interval-ms", options.healthIntervalMs);
    }
    return conf;
  }

  /**
   * The --add-opens flags this JVM was started with. On Java 17 Hadoop 3.x reflects into
   * java.base; the AM and the task JVMs need the same flags as the daemons, and the launcher
   * (hedge.javaenv) is the one place they are listed.
   */
  static String java17Opens() {
    List<String> opens = new ArrayList<>();
    List<String> jvmArgs = ManagementFactory.getRuntimeMXBean().getInputArguments();
    for (int i = 0; i < jvmArgs.size(); i++) {
      String arg = jvmArgs.get(i);
      if (arg.startsWith("--add-opens=")) {
        opens.add(arg);
      } else if (arg.equals("--add-opens") && i + 1 < jvmArgs.size()) {
        opens.add("--add-opens=" + jvmArgs.get(++i));
      }
    }
    return String.join(" ", opens);
  }

  /** Write the configuration atomically: a client never reads half a file. */
  static void writeConf(Configuration conf, File target) throws IOException {
    File partial = new File(target.getPath() + ".partial");
    try (OutputStream out = new FileOutputStream(partial)) {
      conf.writeXml(out);
    }
    if (!partial.renameTo(target)) {
      throw new IOException("cannot rename " + partial + " to " + target);
    }
  }

  private static void waitForStop() throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
        StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.trim().equals("stop")) {
        return;
      }
    }
  }

  /** Command-line options. */
  static final class Options {
    File dir;
    int nodeManagers = 2;
    boolean dfs;
    String healthScript;
    long healthIntervalMs = 1000;

    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--dir":
            o.dir = new File(args[++i]).getAbsoluteFile();
            break;
          case "--nodemanagers":
            o.nodeManagers = Integer.parseInt(args[++i]);
            break;
          case "--dfs":
            o.dfs = true;
            break;
          case "--health-script":
            o.healthScript = args[++i];
            break;
          case "--health-interval-ms":
            o.healthIntervalMs = Long.parseLong(args[++i]);
            break;
          default:
            throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      if (o.dir == null) {
        throw new IllegalArgumentException("--dir is required");
      }
      return o;
    }
  }
}
