package org.hedge.imkp;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Partitioner;
import org.apache.hadoop.mapreduce.lib.partition.HashPartitioner;

/**
 * Micro-benchmark: cost per record of {@link ImkpPartitioner} vs Hadoop's
 * {@link HashPartitioner} on the same Text keys (driven by tests/bench/bench_imkp.py).
 *
 * <p>Usage: {@code PartitionerBench mapping.imkp vocabulary.tsv records runs}; the vocabulary
 * file holds {@code word TAB count} lines; records are drawn with those frequencies. Both
 * partitioners route the same key array, taking turns slice by slice (see {@link #run}):
 * 3 warm-up runs first (JIT), then {@code runs} timed runs; prints the median thread-CPU
 * ns/record of each, the ratio of the medians, and the median and range of the per-run ratios
 * (CPU time, not wall time, so other processes on a shared machine do not skew it).
 */
public final class PartitionerBench {

  private PartitionerBench() {
  }

  public static void main(String[] args) throws IOException {
    Configuration conf = new Configuration(false);
    conf.set(ImkpPartitioner.MAPPING, args[0]);
    ImkpPartitioner<Text, Object> imkp = new ImkpPartitioner<>();
    imkp.setConf(conf);
    int reducers = imkp.mapping().reducers();
    Text[] keys = drawKeys(Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8),
        Integer.parseInt(args[2]));
    int runs = Integer.parseInt(args[3]);
    HashPartitioner<Text, Object> hash = new HashPartitioner<>();
    double[] times = new double[2];
    for (int i = 0; i < 3; i++) {
      run(hash, imkp, keys, reducers, times);
    }
    double[] hashTimes = new double[runs];
    double[] imkpTimes = new double[runs];
    for (int i = 0; i < runs; i++) {
      run(hash, imkp, keys, reducers, times);
      hashTimes[i] = times[0];
      imkpTimes[i] = times[1];
    }
    double h = median(hashTimes);
    double m = median(imkpTimes);
    double[] ratios = new double[runs];
    for (int i = 0; i < runs; i++) {
      ratios[i] = imkpTimes[i] / hashTimes[i]; // both measured on the same slices, interleaved
    }
    Arrays.sort(ratios);
    System.out.printf("records=%d runs=%d reducers=%d%n", keys.length, runs, reducers);
    System.out.printf("hash_ns_per_record=%.3f%n", h);
    System.out.printf("imkp_ns_per_record=%.3f%n", m);
    System.out.printf("ratio=%.3f%n", m / h);
    System.out.printf("pair_ratio_median=%.3f%n", median(ratios));
    System.out.printf("pair_ratio_min=%.3f%n", ratios[0]);
    System.out.printf("pair_ratio_max=%.3f%n", ratios[runs - 1]);
  }

  static Text[] drawKeys(List<String> vocabulary, int records) {
    Text[] distinct = new Text[vocabulary.size()];
    double[] cdf = new double[vocabulary.size()];
    double sum = 0;
    for (int i = 0; i < distinct.length; i++) {
      String[] f = vocabulary.get(i).split("\t");
      distinct[i] = new Text(f[0]);
      sum += Double.parseDouble(f[1]);
      cdf[i] = sum;
    }
    Random rng = new Random(11);
    Text[] keys = new Text[records];
    for (int i = 0; i < records; i++) {
      int at = Arrays.binarySearch(cdf, rng.nextDouble() * sum);
      keys[i] = distinct[Math.min(at < 0 ? -at - 1 : at, distinct.length - 1)];
    }
    return keys;
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** This thread's CPU time in ns (immune to other processes on a shared machine). */
  static long cpuNanos() {
    return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime()
        : System.nanoTime();
  }

  /** Keys per slice: both partitioners take turns slice by slice within one run. */
  static final int SLICE = 1 << 20;

  /**
   * One run over all keys: slice by slice, the two partitioners each route the same slice,
   * the one going first alternating, so a change of machine load hits both alike. Stores the
   * CPU ns per record of HashPartitioner in {@code out[0]} and of ImKP in {@code out[1]}.
   */
  static void run(Partitioner<Text, Object> hash, Partitioner<Text, Object> imkp, Text[] keys,
      int reducers, double[] out) {
    long hashNanos = 0;
    long imkpNanos = 0;
    for (int from = 0, turn = 0; from < keys.length; from += SLICE, turn++) {
      int to = Math.min(keys.length, from + SLICE);
      if (turn % 2 == 0) {
        hashNanos += time(hash, keys, from, to, reducers);
        imkpNanos += time(imkp, keys, from, to, reducers);
      } else {
        imkpNanos += time(imkp, keys, from, to, reducers);
        hashNanos += time(hash, keys, from, to, reducers);
      }
    }
    out[0] = (double) hashNanos / keys.length;
    out[1] = (double) imkpNanos / keys.length;
  }

  /** CPU ns to route keys[from, to); the checksum keeps the JIT from dropping the work. */
  static long time(Partitioner<Text, Object> partitioner, Text[] keys, int from, int to,
      int reducers) {
    long start = cpuNanos();
    long checksum = 0;
    for (int i = from; i < to; i++) {
      checksum += partitioner.getPartition(keys[i], null, reducers);
    }
    long elapsed = cpuNanos() - start;
    if (checksum < 0) {
      System.out.println("impossible");
    }
    return elapsed;
  }

  static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
