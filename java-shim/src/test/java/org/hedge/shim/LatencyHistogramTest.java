package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

  @Test
  void bucketsAreContiguousAndAtMostOneSixtyFourthWide() {
    long previousUpper = -1;
    for (int i = 0; i <= LatencyHistogram.index(LatencyHistogram.MAX_MICROS); i++) {
      long upper = LatencyHistogram.upperMicros(i);
      long lower = previousUpper + 1;
      assertEquals(i, LatencyHistogram.index(lower), "lower edge of bucket " + i);
      assertEquals(i, LatencyHistogram.index(upper), "upper edge of bucket " + i);
      assertTrue(upper - lower <= Math.max(0, lower / 64), "bucket " + i + " too wide");
      previousUpper = upper;
    }
    assertEquals(LatencyHistogram.MAX_MICROS, previousUpper);
  }

  @Test
  void percentilesAreWithinABucketOfTheExactOnes() {
    LatencyHistogram h = new LatencyHistogram();
    Random random = new Random(7);
    long[] values = new long[10_000];
    for (int i = 0; i < values.length; i++) {
      // log-normal around 1 ms, a few scans of 50-200 ms
      values[i] = i % 500 == 0 ? 50_000_000L + random.nextInt(150_000_000)
          : (long) (1e6 * Math.exp(0.5 * random.nextGaussian()));
      h.record(values[i]);
    }
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    for (double q : new double[] {0.5, 0.9, 0.99, 0.999, 1.0}) {
      long exact = sorted[(int) Math.ceil(q * sorted.length) - 1];
      long got = h.percentileNanos(q);
      assertTrue(got >= exact - 1000 && got <= exact + exact / 64 + 1000,
          "q=" + q + ": " + got + " vs exact " + exact);
    }
    assertEquals(sorted[sorted.length - 1], h.maxNanos());
    assertEquals(sorted[sorted.length - 1], h.percentileNanos(1.0));
    assertEquals(values.length, h.count());
  }

  @Test
  void emptyAndOutOfRangeValues() {
    LatencyHistogram h = new LatencyHistogram();
    assertEquals(0, h.percentileNanos(0.99));
    assertEquals("p50=0.000 p99=0.000 max=0.000 mean=0.000 n=0", h.summaryMs());
    h.record(-5);
    h.record(Long.MAX_VALUE); // counted in the last bucket, reported as recorded at most
    assertEquals(2, h.count());
    assertEquals(999, h.percentileNanos(0.5));
    assertEquals(Long.MAX_VALUE, h.percentileNanos(1.0));
    LatencyHistogram one = new LatencyHistogram();
    one.record(2_500_000);
    assertTrue(one.summaryMs().startsWith("p50=2.500 p99=2.500 max=2.500 mean=2.500 n=1"),
        one.summaryMs());
  }
}
