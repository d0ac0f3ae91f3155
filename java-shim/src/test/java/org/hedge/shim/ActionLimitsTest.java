package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** ActionLimits against the vectors Python writes (tests/data/action_limits_vectors.tsv). */
class ActionLimitsTest {

  private static boolean[] flags(String field) {
    int[] values = VectorFile.ints(field);
    boolean[] out = new boolean[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = values[i] == 1;
    }
    return out;
  }

  @Test
  void matchesTheSharedVectors() throws IOException {
    int checked = 0;
    for (String[] f : VectorFile.rows("action_limits_vectors.tsv", 18, true)) {
      String line = String.join("\t", f);
      ActionLimits limits = new ActionLimits(f[0].equals("1"), f[1].equals("1"),
          Double.parseDouble(f[3]), Double.parseDouble(f[4]), Integer.parseInt(f[5]),
          f[2].equals("1"));
      int nMaps = Integer.parseInt(f[6]);
      int room = limits.room(Integer.parseInt(f[7]), Integer.parseInt(f[8]),
          Integer.parseInt(f[9]));
      assertEquals(Integer.parseInt(f[13]), room, "room: " + line);
      assertArrayEquals(VectorFile.ints(f[14]), limits.copies(nMaps, room,
          VectorFile.ints(f[10]), VectorFile.ints(f[11]), flags(f[12])), "copies: " + line);
      assertArrayEquals(flags(f[17]),
          ActionLimits.kills(VectorFile.ints(f[15]), VectorFile.ints(f[16])), "kills: " + line);
      checked++;
    }
    assertTrue(checked >= 300, "only " + checked + " vectors");
  }

  @Test
  void readsHadoopsPropertiesWithHadoopsDefaultsAndSendsThemAsParameters() {
    Configuration conf = new Configuration(false);
    ActionLimits defaults = ActionLimits.of(conf);
    assertEquals(10, defaults.allowed(100, 50));
    assertEquals(20, defaults.allowed(2000, 50));
    conf.setBoolean("mapreduce.map.speculative", false);
    conf.set("mapreduce.job.speculative.speculative-cap-running-tasks", "0.0001");
    conf.setInt("mapreduce.job.speculative.minimum-allowed-tasks", 1);
    conf.setBoolean(HedgeConf.ENFORCE_CAPS, false);
    ActionLimits set = ActionLimits.of(conf);
    assertEquals("", defaults.params()); // Hadoop's defaults: nothing to send
    assertEquals("mapreduce.map.speculative=false\n"
        + "mapreduce.job.speculative.speculative-cap-running-tasks=1.0E-4\n"
        + "mapreduce.job.speculative.minimum-allowed-tasks=1\n"
        + "hedge.caps.enforce=false\n", set.params());
    assertEquals(Integer.MAX_VALUE, set.room(10, 10, 5));
  }
}
