package org.hedge.imkp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ImkpMappingTest {

  static final Path SMALL = Paths.get("..", "tests", "data", "imkp_small.imkp");
  static final Path LOOKUPS = Paths.get("..", "tests", "data", "imkp_small_lookup.tsv");

  static ImkpMapping small() throws IOException {
    return ImkpMapping.parse(Files.readAllBytes(SMALL), SMALL.toString());
  }

  @Test
  void readsThePythonWrittenFileAndAnswersLikePython() throws IOException {
    ImkpMapping mapping = small();
    assertEquals(7, mapping.reducers());
    assertEquals(21, mapping.groups());
    assertEquals(3, mapping.scale());
    assertTrue(mapping.heavyKeyCount() > 0);
    assertEquals(mapping.total(), Arrays.stream(mapping.loads()).sum());
    List<String> lines = Files.readAllLines(LOOKUPS, StandardCharsets.UTF_8);
    int checked = 0;
    for (String line : lines) {
      if (line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      byte[] key = Murmur3Test.unhex(f[0]);
      assertEquals(Integer.parseInt(f[1]), mapping.reducerOf(key, key.length), "key " + f[0]);
      assertEquals(Integer.parseInt(f[1]),
          mapping.reducerOf(new String(key, StandardCharsets.UTF_8)));
      checked++;
    }
    assertTrue(checked > 40);
  }

  @Test
  void loadsMatchThePythonPrediction() throws IOException {
    // hedge imkp show tests/data/imkp_small.imkp
    assertArrayEquals(new long[] {3987, 2616, 2723, 2740, 2625, 2689, 2620}, small().loads());
  }

  @Test
  void heavyKeyCompareSeesEveryByte() {
    java.util.Random rng = new java.util.Random(5);
    for (int length = 0; length <= 13; length++) {
      for (int at = 0; at < 3; at++) {
        byte[] pool = new byte[at + length + rng.nextInt(3)];
        rng.nextBytes(pool);
        byte[] key = Arrays.copyOfRange(pool, at, at + length + rng.nextInt(2));
        assertTrue(ImkpMapping.equal(pool, at, key, length), length + "@" + at);
        for (int i = 0; i < length; i++) { // each byte, one bit at a time, is compared
          for (int bit = 0; bit < 8; bit++) {
            key[i] ^= 1 << bit;
            assertFalse(ImkpMapping.equal(pool, at, key, length), length + "@" + at + " " + i);
            key[i] ^= 1 << bit;
          }
        }
      }
    }
  }

  static final Path BOUND = Paths.get("..", "tests", "data", "imkp_bound.imkp");
  static final Path FLAGS = Paths.get("..", "tests", "data", "imkp_header_flags.tsv");

  @Test
  void headerFlagsFollowTheSharedVectors() throws IOException {
    assertFalse(small().heaviestKeyIsBound());
    byte[] bound = Files.readAllBytes(BOUND);
    int checked = 0;
    for (String line : Files.readAllLines(FLAGS, StandardCharsets.UTF_8)) {
      if (line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      byte[] data = bound.clone();
      System.arraycopy(Murmur3Test.unhex(f[0]), 0, data, 60, 4);
      if (f[1].equals("reject")) {
        assertTrue(parseError(data).getMessage().contains("unknown header flags 0x"
            + Integer.toHexString((int) Long.parseLong(f[0], 16))), f[0]);
      } else {
        ImkpMapping mapping = ImkpMapping.parse(data, "job.imkp");
        assertEquals(f[1].equals("bound"), mapping.heaviestKeyIsBound(), f[0]);
        assertEquals(76, mapping.heaviestKeyCount());
        assertEquals(1000, mapping.total());
      }
      checked++;
    }
    assertEquals(6, checked);
  }

  private static IOException parseError(byte[] data) {
    return assertThrows(IOException.class, () -> ImkpMapping.parse(data, "job.imkp"));
  }

  @Test
  void corruptedTruncatedAndWrongVersionFilesFailWithTheFix() throws IOException {
    byte[] good = Files.readAllBytes(SMALL);

    byte[] flipped = good.clone();
    flipped[good.length - 3] ^= 0x40;
    assertTrue(parseError(flipped).getMessage().contains("corrupted (checksum mismatch)"));

    IOException truncated = parseError(Arrays.copyOf(good, good.length - 5));
    assertTrue(truncated.getMessage().contains("truncated"), truncated.getMessage());
    assertTrue(truncated.getMessage().contains("hedge imkp build"), truncated.getMessage());
    assertTrue(parseError(Arrays.copyOf(good, 20)).getMessage().contains("truncated"));

    byte[] version = good.clone();
    version[9] = 2;
    assertTrue(parseError(version).getMessage().contains("version 2, this shim reads version 1"));

    byte[] magic = good.clone();
    magic[0] = 'X';
    assertTrue(parseError(magic).getMessage().contains("not an ImKP mapping file"));

    byte[] header = good.clone();
    header[19] = 9; // reducers 7 -> 9: the checksum covers the header too
    assertTrue(parseError(header).getMessage().contains("checksum"));
  }
}
