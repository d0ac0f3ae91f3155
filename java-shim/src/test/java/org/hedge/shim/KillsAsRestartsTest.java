package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;

import org.junit.jupiter.api.Test;

/** A kill is sent only as one of its task's copies; a kill nothing pairs with is held. */
class KillsAsRestartsTest {

  @Test
  void matchesTheSharedVectors() throws IOException {
    // tests/data/kills_as_restarts_vectors.tsv, written by Python from hedge.policy.limits
    int checked = 0;
    for (String[] f : VectorFile.rows("kills_as_restarts_vectors.tsv", 5, true)) {
      String line = String.join("\t", f);
      int[] copies = VectorFile.ints(f[2]);
      boolean[] send = KillsAsRestarts.pair(VectorFile.ints(f[0]), VectorFile.ints(f[1]), copies);
      int[] sent = VectorFile.ints(f[3]);
      boolean[] expected = new boolean[sent.length];
      for (int i = 0; i < sent.length; i++) {
        expected[i] = sent[i] == 1;
      }
      assertArrayEquals(expected, send, "sent: " + line);
      assertArrayEquals(VectorFile.ints(f[4]), copies, "left: " + line);
      checked++;
    }
    assertTrue(checked >= 300, "only " + checked + " vectors");
  }

  @Test
  void aKillWithACopyOfItsTaskIsSentAndStandsForThatCopy() {
    int[] copies = {1};
    boolean[] send = KillsAsRestarts.pair(new int[] {3}, new int[] {3}, copies);
    assertArrayEquals(new boolean[] {true}, send);
    assertArrayEquals(new int[] {0}, copies, "the AM's new attempt is the copy");
  }

  @Test
  void aLoneKillIsHeld() {
    int[] copies = {2};
    boolean[] send = KillsAsRestarts.pair(new int[] {5}, new int[] {3}, copies);
    assertArrayEquals(new boolean[] {false}, send);
    assertArrayEquals(new int[] {2}, copies);
  }

  @Test
  void killsBeyondTheCopiesOfTheirTaskAreHeldInTheAnswersOrder() {
    // task 4: two kills, one copy; task 7: one kill, three copies; -1: refused by rule 4
    int[] copies = {1, 3};
    boolean[] send = KillsAsRestarts.pair(new int[] {4, 7, -1, 4}, new int[] {4, 7}, copies);
    assertArrayEquals(new boolean[] {true, true, false, false}, send);
    assertArrayEquals(new int[] {0, 2}, copies);
  }

  @Test
  void copiesCapsRefusedCannotCarryAKill() {
    // the caps granted task 2 no copy: its kill would be a restart nobody asked for
    int[] copies = {0, 1};
    boolean[] send = KillsAsRestarts.pair(new int[] {2}, new int[] {2, 2}, copies);
    assertArrayEquals(new boolean[] {true}, send, "a later entry of the same task pairs");
    assertArrayEquals(new int[] {0, 0}, copies);
    int[] none = {0};
    assertArrayEquals(new boolean[] {false},
        KillsAsRestarts.pair(new int[] {2}, new int[] {2}, none));
  }
}
