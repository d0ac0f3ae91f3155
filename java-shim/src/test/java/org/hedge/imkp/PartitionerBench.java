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
 * partitioners run alternately over the same key array: warm-up runs first (JIT), then
 * {@code runs} timed runs each; prints the median thread-CPU ns/record of each and their ratio
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
    for (int i = 0; i < 3; i++) {
      time(hash, keys, reducers);
      time(imkp, keys, reducers);
    }
    double[] hashTimes = new double[runs];
    double[] imkpTimes = new double[runs];
    for (int i = 0; i < runs; i++) {
      hashTimes[i] = time(hash, keys, reducers);
      imkpTimes[i] = time(imkp, keys, reducers);
    }
    double h = median(hashTimes);
    double m = median(imkpTimes);
    System.out.printf("records=%d runs=%d reducers=%d%n", keys.length, runs, reducers);
    System.out.printf("hash_ns_per_record=%.3f%n", h);
    System.out.printf("imkp_ns_per_record=%.3f%n", m);
    System.out.printf("ratio=%.3f%n", m / h);
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

  /** CPU ns per record for one pass; the checksum keeps the JIT from dropping work. */
  static double time(Partitioner<Text, Object> partitioner, Text[] keys, int reducers) {
    long start = cpuNanos();
    long checksum = 0;
    for (Text key : keys) {
      checksum += partitioner.getPartition(key, null, reducers);
    }
    long elapsed = cpuNanos() - start;
    if (checksum < 0) {
      System.out.println("impossible");
    }
    return (double) elapsed / keys.length;
  }

  static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
