package org.hedge.shim.harness;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.HashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;

/**
 * Scan latency on the harness job: hedge (Java to Python to Java per scan) against Hadoop's
 * DefaultSpeculator (with its default LegacyTaskRuntimeEstimator) on the same scripted job.
 *
 * <p>Usage: BenchMain ROWS SCANS [--conf KEY=VALUE ...]. The job has ROWS map tasks, every
 * tenth short (they complete during warm-up so DefaultSpeculator has statistics), the rest
 * long; after {@link #WARMUP_SCANS} simulated seconds of warm-up (one untimed scan each, for
 * both speculators), SCANS scans are timed (wall clock, only the scan call), one per simulated
 * second with the heartbeats of that second delivered between.
 * Prints "BENCH speculator=NAME rows=ROWS p50_ms=.. p99_ms=.. mean_ms=.. cpu_p50_ms=.. ..":
 * wall time per scan, CPU time of the scan thread, the server's CPU per scan (as each answer
 * reports it), and the scans slower than {@link #SLOW_MS}: how many, and the CPU (scan thread +
 * server) they used. A slow scan whose CPU is far below its wall time waited for a core.
 *
 * <p>The long tasks' work is at least the warm-up plus the timed scans plus 60 s, so every timed
 * scan sees the live job (about 0.9 ROWS running attempts, a third of them reporting per scan).
 * -Dhedge.bench.only=hedge (or default) runs one speculator only.
 *
 * <p>With -Dhedge.bench.trace=true every timed hedge scan is also printed to stderr as
 * "TRACE i=.. ms=.. snap=.. rt=.. cpu=.. srv=.." (snapshot + encoding, round trip, scan-thread
 * CPU, server CPU):
 * where a slow scan spent its time.
 */
public final class BenchMain {
  /**
   * Untimed scans before timing starts. 10 left the JIT still compiling the scan path: the
   * first 20 timed scans at 10,000 rows took 1.5 ms CPU against 0.9 ms later, and held the
   * slowest scans of the run (an AM scans every second for the job's whole life, so the
   * steady state is what matters). Both speculators get the same warm-up.
   * -Dhedge.bench.warmup=N overrides it (10 reproduces the earlier figures).
   */
  static final int WARMUP_SCANS = Integer.getInteger("hedge.bench.warmup", 60);

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    org.apache.log4j.BasicConfigurator.configure(new org.apache.log4j.ConsoleAppender(
        new org.apache.log4j.PatternLayout("%p %c{1} %m%n"), "System.err"));
    org.apache.log4j.Logger.getRootLogger().setLevel(org.apache.log4j.Level.WARN);
    int rows = Integer.parseInt(args[0]);
    int scans = Integer.parseInt(args[1]);
    Configuration conf = new Configuration(false);
    conf.setBoolean("hedge.speculator.background", false);
    for (int i = 2; i + 1 < args.length; i += 2) {
      int eq = args[i + 1].indexOf('=');
      conf.set(args[i + 1].substring(0, eq), args[i + 1].substring(eq + 1));
    }
    PrintStream out = System.out;
    Configuration hedge = new Configuration(conf);
    hedge.set(MRJobConfig.MR_AM_JOB_SPECULATOR, "org.hedge.shim.HedgeSpeculator");
    hedge.set(MRJobConfig.MR_AM_TASK_ESTIMATOR, "org.hedge.shim.HedgeRuntimeEstimator");
    Configuration stock = new Configuration(conf);
    stock.set(MRJobConfig.MR_AM_JOB_SPECULATOR,
        "org.apache.hadoop.mapreduce.v2.app.speculate.DefaultSpeculator");
    // -Dhedge.bench.only=hedge: skip DefaultSpeculator (traces of hedge's scans only)
    String only = System.getProperty("hedge.bench.only", "");
    for (String name : only.isEmpty() ? new String[] {"default", "hedge"}
        : new String[] {only}) {
      double[][] runs = run(name.equals("hedge") ? hedge : stock, rows, scans);
      double[] ms = runs[0];
      double[] cpu = runs[1];
      double[] server = runs[2];
      // scans over the target: how much of their time was CPU (AM scan thread + server)?
      int slow = 0;
      double[] slowCpu = new double[ms.length];
      double[] slowMs = new double[ms.length];
      for (int i = 0; i < ms.length; i++) {
        if (ms[i] > SLOW_MS) {
          slowCpu[slow] = cpu[i] + server[i];
          slowMs[slow++] = ms[i];
        }
      }
      double mean = 0;
      for (double m : ms) mean += m / ms.length;
      out.printf("BENCH speculator=%s rows=%d p50_ms=%.3f p99_ms=%.3f mean_ms=%.3f "
          + "cpu_p50_ms=%.3f cpu_p99_ms=%.3f server_cpu_p50_ms=%.3f server_cpu_p99_ms=%.3f "
          + "slow=%d slow_ms_p50=%.3f slow_cpu_p50_ms=%.3f slow_cpu_max_ms=%.3f%n", name, rows,
          pct(ms, 0.5), pct(ms, 0.99), mean, pct(cpu, 0.5), pct(cpu, 0.99), pct(server, 0.5),
          pct(server, 0.99), slow, pct(Arrays.copyOf(slowMs, slow), 0.5),
          pct(Arrays.copyOf(slowCpu, slow), 0.5), pct(Arrays.copyOf(slowCpu, slow), 1.0));
    }
    System.exit(0);
  }

  /** A scan slower than this (the p99 target) is examined: CPU or waiting? */
  static final double SLOW_MS = 10.0;

  /** The ceil(q n)-th smallest value (q = 0.5: median; q = 1: the maximum); NaN if empty. */
  static double pct(double[] values, double q) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    if (q == 0.5) {
      return sorted[sorted.length / 2];
    }
    return sorted[(int) Math.max(0, Math.min(sorted.length - 1,
        Math.ceil(q * sorted.length) - 1))];
  }

  /** Bytes this thread allocated so far (HotSpot's extension; -1 elsewhere). */
  static long allocated(java.lang.management.ThreadMXBean threads) {
    return threads instanceof com.sun.management.ThreadMXBean
        ? ((com.sun.management.ThreadMXBean) threads).getThreadAllocatedBytes(
        Thread.currentThread().getId()) : -1;
  }

  /**
   * {wall ms per scan, scan-thread CPU ms per scan, server CPU ms per scan as the answers
   * report it (0 for DefaultSpeculator)}.
   */
  static double[][] run(Configuration conf, int rows, int scans) {
    java.lang.management.ThreadMXBean threads =
        java.lang.management.ManagementFactory.getThreadMXBean();
    PrintStream quiet = new PrintStream(new java.io.OutputStream() {
      @Override
      public void write(int b) {}
    });
    // The long tasks outlive every timed scan: with 600 s of work they ended at about the
    // 600th tick, so a run of 500 warm-up + 500 timed scans timed 400 scans of an empty job
    // (its p50 was an empty job's, its p99 the live job's).
    final double longWork = Math.max(600, WARMUP_SCANS + scans + 60);
    AmHarness h = new AmHarness(conf, rows, 0, 600, 2, new HashMap<Integer, Double>(),
        1_700_000_000_000L, quiet) {
      @Override
      double work(int index) {
        return index % 10 == 0 ? 5 : longWork + index % 7;
      }
    };
    h.begin();
    for (int t = 0; t < WARMUP_SCANS; t++) {
      h.tick();
    }
    double[] ms = new double[scans];
    double[] cpu = new double[scans];
    double[] server = new double[scans];
    boolean trace = Boolean.getBoolean("hedge.bench.trace");
    org.hedge.shim.HedgeSpeculator hs = h.speculator() instanceof org.hedge.shim.HedgeSpeculator
        ? (org.hedge.shim.HedgeSpeculator) h.speculator() : null;
    for (int i = 0; i < scans; i++) {
      long[] before = hs != null ? hs.scanTimings() : null;
      h.ctx.clock.now += 1000;
      h.launches();
      h.reports();
      long a0 = trace ? allocated(threads) : 0;
      long c0 = threads.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      h.scan();
      ms[i] = (System.nanoTime() - t0) / 1e6;
      cpu[i] = (threads.getCurrentThreadCpuTime() - c0) / 1e6;
      if (hs != null) {
        long[] after = hs.scanTimings();
        server[i] = (after[3] - before[3]) / 1e3;
        if (trace) {
          System.err.printf("TRACE i=%d ms=%.3f snap=%.3f rt=%.3f cpu=%.3f srv=%.3f "
              + "alloc_kb=%.1f%n", i, ms[i], (after[0] - before[0]) / 1e6,
              (after[1] - before[1]) / 1e6, cpu[i], server[i],
              (allocated(threads) - a0) / 1024.0);
        }
      }
      h.applyEvents();
    }
    if (h.speculator() instanceof org.hedge.shim.HedgeSpeculator) {
      long[] t = ((org.hedge.shim.HedgeSpeculator) h.speculator()).scanTimings();
      System.out.printf("PARTS rows=%d snapshot_ms=%.3f roundtrip_ms=%.3f scans=%d%n", rows,
          t[0] / 1e6 / Math.max(1, t[2]), t[1] / 1e6 / Math.max(1, t[2]), t[2]);
    }
    h.stop();
    return new double[][] {ms, cpu, server};
  }
}
