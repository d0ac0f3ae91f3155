package org.hedge.cluster;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.speculate.DefaultSpeculator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop's DefaultSpeculator with its scans timed, for tests/bench/bench_cluster.py
 * (yarn.app.mapreduce.am.job.speculator.class = org.hedge.cluster.TimedDefaultSpeculator; the
 * class reaches the MRAppMaster in the job's jar). It runs DefaultSpeculator's own background
 * loop (Hadoop 3.x: scan, then wait soonestRetryAfterSpeculate or ...NoSpeculate, at least as
 * long as the scan took) and times each call of its private computeSpeculations(); at stop it
 * logs "hedge-bench: DefaultSpeculator scan latency ms p50=.. p99=.. max=.. mean=.. n=..
 * (tasks N)", the figures HedgeSpeculator logs as "hedge: scan latency ms ...". Test code.
 */
public class TimedDefaultSpeculator extends DefaultSpeculator {
  private static final Logger LOG = LoggerFactory.getLogger(TimedDefaultSpeculator.class);
  private static final int MAX_SAMPLES = 1 << 20;

  private final AppContext context;
  private final Method computeSpeculations;
  private volatile boolean stopped;
  private Thread thread;
  private long[] nanos = new long[1024];
  private int n;
  private int tasks;

  public TimedDefaultSpeculator(Configuration conf, AppContext context) {
    super(conf, context);
    this.context = context;
    try {
      computeSpeculations = DefaultSpeculator.class.getDeclaredMethod("computeSpeculations");
      computeSpeculations.setAccessible(true);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException("this Hadoop's DefaultSpeculator has no "
          + "computeSpeculations(): TimedDefaultSpeculator needs Hadoop 2.7-3.4", e);
    }
  }

  @Override
  protected void serviceStart() throws Exception {
    // not super.serviceStart(): that starts Hadoop's untimed loop; this one replaces it
    thread = new Thread(new Runnable() {
      @Override
      public void run() {
        loop();
      }
    }, "DefaultSpeculator background processing (timed)");
    thread.setDaemon(true);
    thread.start();
  }

  private void loop() {
    while (!stopped && !Thread.currentThread().isInterrupted()) {
      long started = System.currentTimeMillis();
      int speculations;
      try {
        long t0 = System.nanoTime();
        speculations = (Integer) computeSpeculations.invoke(this);
        record(System.nanoTime() - t0);
      } catch (IllegalAccessException | InvocationTargetException e) {
        LOG.error("hedge-bench: DefaultSpeculator scan failed", e);
        speculations = 0;
      }
      long wait = Math.max(speculations > 0 ? getSoonestRetryAfterSpeculate()
          : getSoonestRetryAfterNoSpeculate(), System.currentTimeMillis() - started);
      if (speculations > 0) {
        LOG.info("We launched " + speculations + " speculations.  Sleeping " + wait
            + " milliseconds.");
      }
      try {
        Thread.sleep(wait);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private synchronized void record(long elapsed) {
    if (n == nanos.length && n < MAX_SAMPLES) {
      nanos = Arrays.copyOf(nanos, n * 2);
    }
    if (n < nanos.length) {
      nanos[n++] = elapsed;
    }
    for (Job job : context.getAllJobs().values()) {
      tasks = Math.max(tasks, job.getTotalMaps() + job.getTotalReduces());
    }
  }

  @Override
  protected void serviceStop() throws Exception {
    stopped = true;
    if (thread != null) {
      thread.interrupt();
    }
    LOG.info("hedge-bench: DefaultSpeculator scan latency ms " + summary() + " (tasks " + tasks
        + ")");
    super.serviceStop();
  }

  /** "p50=.. p99=.. max=.. mean=.. n=..", milliseconds, from every timed scan. */
  synchronized String summary() {
    long[] sorted = Arrays.copyOf(nanos, n);
    Arrays.sort(sorted);
    double mean = 0;
    for (long v : sorted) {
      mean += v / 1e6 / Math.max(1, n);
    }
    return String.format(Locale.ROOT, "p50=%.3f p99=%.3f max=%.3f mean=%.3f n=%d",
        rank(sorted, 0.5) / 1e6, rank(sorted, 0.99) / 1e6, rank(sorted, 1.0) / 1e6, mean, n);
  }

  private static long rank(long[] sorted, double q) {
    return sorted.length == 0 ? 0
        : sorted[(int) Math.max(0, Math.ceil(q * sorted.length) - 1)];
  }
}
