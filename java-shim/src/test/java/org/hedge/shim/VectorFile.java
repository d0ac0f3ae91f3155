package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The rows of a test-vector file Python writes under tests/data (tests/vector_files.py): '#'
 * comment lines and, where the file has one, the line of column names are skipped; every row
 * must have {@code fields} tab-separated fields.
 */
final class VectorFile {
  private VectorFile() {
  }

  static List<String[]> rows(String name, int fields, boolean columnLine) throws IOException {
    List<String[]> rows = new ArrayList<>();
    boolean skip = columnLine;
    for (String line : Files.readAllLines(Paths.get("..", "tests", "data", name),
        StandardCharsets.UTF_8)) {
      if (line.startsWith("#")) {
        continue;
      }
      if (skip) {
        skip = false; // the column names
        continue;
      }
      String[] f = line.split("\t", -1);
      assertEquals(fields, f.length, name + ": " + line);
      rows.add(f);
    }
    return rows;
  }

  /** A comma-separated list of integers (empty: none), as tests/vector_files.py writes them. */
  static int[] ints(String field) {
    if (field.isEmpty()) {
      return new int[0];
    }
    String[] parts = field.split(",");
    int[] out = new int[parts.length];
    for (int i = 0; i < parts.length; i++) {
      out[i] = Integer.parseInt(parts[i]);
    }
    return out;
  }
}
