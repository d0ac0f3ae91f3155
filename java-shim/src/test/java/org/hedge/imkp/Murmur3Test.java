package org.hedge.imkp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.hash.Hashing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.io.Text;
import org.junit.jupiter.api.Test;

class Murmur3Test {

  /** The vector file shared with pytest, found from the Maven module directory. */
  static Path vectorFile() {
    return Paths.get("..", "tests", "data", "imkp_hash_vectors.tsv");
  }

  static byte[] unhex(String hex) {
    byte[] out = new byte[hex.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  @Test
  void matchesSharedVectorsAndHadoopTextHash() throws IOException {
    List<String> lines = Files.readAllLines(vectorFile(), StandardCharsets.UTF_8);
    int checked = 0;
    for (String line : lines) {
      if (line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      byte[] key = unhex(f[0]);
      assertEquals(Long.parseLong(f[1]), Murmur3.hash32(key, 0, key.length, 0) & 0xffffffffL,
          "murmur3 of " + f[0]);
      Text text = new Text(key);
      assertEquals(Integer.parseInt(f[2]), text.hashCode(), "Text.hashCode of " + f[0]);
      assertEquals(f[0].isEmpty() ? "" : new String(key, StandardCharsets.UTF_8),
          text.toString());
      checked++;
    }
    assertTrue(checked >= 100, "only " + checked + " vectors");
  }

  @Test
  void agreesWithGuavaReferenceOnRandomBytesAndOffsets() {
    Random rng = new Random(7);
    for (int n = 0; n < 2000; n++) {
      byte[] data = new byte[rng.nextInt(80) + 3];
      rng.nextBytes(data);
      int off = rng.nextInt(3);
      int len = rng.nextInt(data.length - off + 1);
      byte[] slice = java.util.Arrays.copyOfRange(data, off, off + len);
      assertEquals(Hashing.murmur3_32().hashBytes(slice).asInt(),
          Murmur3.hash32(data, off, len, 0));
      assertEquals(Hashing.murmur3_32(42).hashBytes(slice).asInt(),
          Murmur3.hash32(data, off, len, 42));
    }
  }

  @Test
  void groupIsUnsignedModulo() {
    assertEquals((int) (0xfffffffFL % 7), Murmur3.group(-1, 7));
    assertEquals(3, Murmur3.group(10, 7));
  }

  @Test
  void divisionFreeGroupEqualsUnsignedModulo() {
    int[] groups = {1, 2, 3, 7, 50, 500, 1000, 4096, 5000, 65537, 1 << 20, 999_999_937,
        (1 << 30) + 1, Integer.MAX_VALUE - 1, Integer.MAX_VALUE};
    int[] edges = {0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, Integer.MIN_VALUE + 1, -2};
    Random rng = new Random(3);
    for (int g : groups) {
      long magic = Murmur3.groupMagic(g);
      for (int h : edges) {
        assertEquals((int) ((h & 0xffffffffL) % g), Murmur3.group(h, g, magic), h + " mod " + g);
      }
      for (int q = 1; q < 40 && (long) q * g <= 0xffffffffL; q++) { // around multiples of g
        for (int d = -1; d <= 1; d++) {
          int h = (int) ((long) q * g + d);
          assertEquals((int) ((h & 0xffffffffL) % g), Murmur3.group(h, g, magic));
        }
      }
      for (int n = 0; n < 200_000; n++) {
        int h = rng.nextInt();
        assertEquals(Murmur3.group(h, g), Murmur3.group(h, g, magic), h + " mod " + g);
      }
    }
  }
}
