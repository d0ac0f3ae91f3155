package org.hedge.shim;

import java.util.Locale;

/**
 * A bounded histogram of durations (the per-scan decision latency the speculator logs at stop):
 * microsecond buckets below 128 us, then 64 buckets per power of two (each at most 1/64 = 1.6 %
 * wide), up to {@link #MAX_MICROS}; 16 KB whatever the job's length. Percentiles are the upper
 * edge of the bucket holding that rank (never above the largest value recorded; the largest
 * itself for the top rank). Thread-safe:
 * the scan thread records, the service's stop reads.
 */
final class LatencyHistogram {
  private static final int SUB_BITS = 6;
  private static final int SUB = 1 << SUB_BITS; // buckets per power of two
  /** Longer durations are counted as this (about 19 hours). */
  static final long MAX_MICROS = (1L << 36) - 1;
  private final long[] counts = new long[index(MAX_MICROS) + 1];
  private long n;
  private long maxNanos;
  private long sumNanos;

  /** The bucket of a duration in microseconds (0..MAX_MICROS). */
  static int index(long micros) {
    if (micros < 2 * SUB) {
      return (int) micros;
    }
    int shift = 63 - Long.numberOfLeadingZeros(micros) - SUB_BITS;
    return SUB * shift + (int) (micros >>> shift);
  }

  /** The largest duration in microseconds that falls in bucket {@code index}. */
  static long upperMicros(int index) {
    if (index < 2 * SUB) {
      return index;
    }
    int shift = index / SUB - 1;
    long mantissa = index % SUB + SUB;
    return ((mantissa + 1) << shift) - 1;
  }

  synchronized void record(long nanos) {
    long micros = Math.min(MAX_MICROS, Math.max(0, nanos) / 1000);
    counts[index(micros)]++;
    n++;
    sumNanos += micros * 1000 + Math.max(0, nanos) % 1000;
    maxNanos = Math.max(maxNanos, nanos);
  }

  synchronized long count() {
    return n;
  }

  synchronized long maxNanos() {
    return maxNanos;
  }

  /** The q-quantile (0 < q <= 1) in nanoseconds; 0 when nothing was recorded. */
  synchronized long percentileNanos(double q) {
    if (n == 0) {
      return 0;
    }
    long rank = Math.max(1, (long) Math.ceil(q * n));
    if (rank >= n) {
      return maxNanos;
    }
    long seen = 0;
    for (int i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= rank) {
        return Math.min(maxNanos, upperMicros(i) * 1000 + 999);
      }
    }
    return maxNanos;
  }

  /** "p50=0.84 p99=3.10 max=12.50 mean=1.02 n=312", milliseconds. */
  synchronized String summaryMs() {
    return String.format(Locale.ROOT, "p50=%.3f p99=%.3f max=%.3f mean=%.3f n=%d",
        percentileNanos(0.5) / 1e6, percentileNanos(0.99) / 1e6, maxNanos / 1e6,
        n == 0 ? 0.0 : sumNanos / 1e6 / n, n);
  }
}
