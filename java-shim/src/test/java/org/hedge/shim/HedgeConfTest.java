package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;


import org.junit.jupiter.api.Test;

/** A policy's parameter prefix, against the vectors Python writes (policy_family_vectors.tsv). */
class HedgeConfTest {
  @Test
  void everyPolicysParameterPrefixIsPythonsToo() throws Exception {
    int checked = 0;
    for (String[] f : VectorFile.rows("policy_family_vectors.tsv", 2, false)) {
      assertEquals(f[1], HedgeConf.paramPrefix(f[0]), f[0]);
      checked++;
    }
    assertTrue(checked > 15, "vectors read: " + checked);
  }
}
