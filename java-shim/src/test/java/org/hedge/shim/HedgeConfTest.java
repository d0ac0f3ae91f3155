package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

import org.junit.jupiter.api.Test;

/** A policy's parameter prefix, against the vectors Python writes (policy_family_vectors.tsv). */
class HedgeConfTest {
  @Test
  void everyPolicysParameterPrefixIsPythonsToo() throws Exception {
    List<String> lines = Files.readAllLines(
        Paths.get("..", "tests", "data", "policy_family_vectors.tsv"), StandardCharsets.UTF_8);
    int checked = 0;
    for (String line : lines) {
      if (line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t");
      assertEquals(f[1], HedgeConf.paramPrefix(f[0]), f[0]);
      checked++;
    }
    assertTrue(checked > 15, "vectors read: " + checked);
  }
}
