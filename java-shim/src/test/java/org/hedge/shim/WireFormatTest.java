package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

class WireFormatTest {

  private static Scan twoRows() {
    Scan s = new Scan(2);
    s.seq = 7;
    s.nowMs = 1_000_060_000L;
    s.jobStartMs = 1_000_000_000L;
    s.nMaps = 2;
    s.nReduces = 1;
    s.task = new int[] {0, 2};
    s.attempt = new int[] {10, 11};
    s.node = new int[] {0, -1};
    s.start = new int[] {1500, WireFormat.MISSING};
    s.firstProgressTime = new int[] {4000, WireFormat.MISSING};
    s.report = new int[] {59000, WireFormat.MISSING};
    s.firstProgress = new float[] {0.125f, 0f};
    s.progress = new float[] {0.5f, 0f};
    s.bytesProcessed = new double[] {64.0, Double.NaN};
    s.inputBytes = new double[] {Double.NaN, Double.NaN};
    s.taskType = new byte[] {0, 1};
    s.state = new byte[] {1, 1};
    s.speculative = new byte[] {0, 1};
    s.doneMapRuntimes = new float[] {12.5f};
    s.newNodeNames = "h1".getBytes(StandardCharsets.UTF_8);
    return s;
  }

  @Test
  void requestLayoutMatchesTheDocumentedOffsets() {
    ByteBuffer b = WireFormat.encode(twoRows(), null).order(ByteOrder.LITTLE_ENDIAN);
    int body = 2 * WireFormat.ROW_BYTES + 4 + 2;
    assertEquals(WireFormat.REQUEST_HEADER + body, b.limit());
    assertEquals('H', b.get(0));
    assertEquals(WireFormat.VERSION, b.getShort(4));
    assertEquals(3, WireFormat.VERSION);
    assertEquals(7, b.getInt(8));
    assertEquals(body, b.getInt(12));
    assertEquals(1_000_060_000L, b.getLong(16));
    assertEquals(1_000_000_000L, b.getLong(24));
    assertEquals(-1L, b.getLong(32));
    assertEquals(2, b.getInt(40)); // maps
    assertEquals(1, b.getInt(44)); // reduces
    assertEquals(2, b.getInt(48)); // rows
    assertEquals(1, b.getInt(52)); // completed maps
    assertEquals(2, b.getInt(64)); // node name bytes
    assertEquals(0, b.getShort(6)); // flags: full snapshot
    assertEquals(0, b.getInt(80)); // no removed keys
    int h = WireFormat.REQUEST_HEADER;
    assertEquals(64.0, b.getDouble(h));
    int ints = h + 2 * 16; // after two f64 columns
    assertEquals(2, b.getInt(ints + 4)); // task column, row 1
    assertEquals(11, b.getInt(ints + 8 + 4)); // attempt column, row 1
    assertEquals(1500, b.getInt(ints + 3 * 8)); // start column, row 0
    assertEquals(WireFormat.MISSING, b.getInt(ints + 3 * 8 + 4));
    int floats = ints + 6 * 8;
    assertEquals(0.5f, b.getFloat(floats + 8));
    int bytes = floats + 2 * 8;
    assertEquals(1, b.get(bytes + 1)); // task_type of row 1 = REDUCE
    assertEquals(1, b.get(bytes + 5)); // speculative of row 1
    assertEquals(12.5f, b.getFloat(bytes + 6));
    assertEquals('h', b.get(bytes + 10));
  }

  /** Ended columns follow the run times, column after column: f64 first, then i32s, u8s. */
  @Test
  void endedColumnsFollowTheRunTimes() {
    Scan s = new Scan(0);
    s.rows = 0;
    s.doneReduceRuntimes = new float[] {3f};
    s.removed = new int[] {4, 5};
    s.removedTask = new int[] {1, 6};
    s.removedNode = new int[] {0, -1};
    s.removedStart = new int[] {100, WireFormat.MISSING};
    s.removedEnd = new int[] {900, 950};
    s.removedState = new byte[] {JobTracker.SUCCEEDED, JobTracker.FAILED};
    s.removedSpeculative = new byte[] {0, 1};
    s.removedInputBytes = new double[] {Double.NaN, 2048.0};
    ByteBuffer b = WireFormat.encode(s, null).order(ByteOrder.LITTLE_ENDIAN);
    int body = 4 + 2 * WireFormat.ENDED_BYTES;
    assertEquals(30, WireFormat.ENDED_BYTES);
    assertEquals(WireFormat.REQUEST_HEADER + body, b.limit());
    assertEquals(body, b.getInt(12));
    assertEquals(2, b.getInt(80)); // ended attempts
    int e = WireFormat.REQUEST_HEADER + 4; // after one reduce run time
    assertTrue(Double.isNaN(b.getDouble(e)));
    assertEquals(2048.0, b.getDouble(e + 8));
    int ints = e + 2 * 8;
    assertEquals(5, b.getInt(ints + 4)); // key
    assertEquals(6, b.getInt(ints + 8 + 4)); // task
    assertEquals(-1, b.getInt(ints + 2 * 8 + 4)); // node
    assertEquals(100, b.getInt(ints + 3 * 8)); // start
    assertEquals(950, b.getInt(ints + 4 * 8 + 4)); // end
    int bytes = ints + 5 * 8;
    assertEquals(JobTracker.FAILED, b.get(bytes + 1)); // state
    assertEquals(1, b.get(bytes + 3)); // speculative
  }

  /** Every frame of wire_request_vectors.tsv, encoded from its fields, gives its bytes. */
  @Test
  void requestFramesMatchTheSharedVectors() throws IOException {
    int n = 0;
    for (String[] row : VectorFile.rows("wire_request_vectors.tsv", 3, true)) {
      Map<String, String> f = new HashMap<>();
      for (String item : row[1].split(" ")) {
        int eq = item.indexOf('=');
        f.put(item.substring(0, eq), item.substring(eq + 1));
      }
      ByteBuffer b = WireFormat.encode(scan(f), null);
      byte[] bytes = new byte[b.remaining()];
      b.get(bytes);
      assertEquals(row[2], hex(bytes), row[0]);
      n++;
    }
    assertEquals(3, n);
  }

  private static Scan scan(Map<String, String> f) {
    int[] task = ints(f.get("task"));
    Scan s = new Scan(task.length);
    s.seq = Integer.parseInt(f.get("seq"));
    s.nowMs = Long.parseLong(f.get("nowMs"));
    s.jobStartMs = 1_000_000_000L; // tests/wire_vectors.py JOB_START_MS
    s.deadlineMs = Long.parseLong(f.get("deadlineMs"));
    s.nMaps = Integer.parseInt(f.get("nMaps"));
    s.nReduces = Integer.parseInt(f.get("nReduces"));
    s.nodeBase = Integer.parseInt(f.get("nodeBase"));
    s.fallbacks = Integer.parseInt(f.get("fallbacks"));
    s.totalSlots = Integer.parseInt(f.get("totalSlots"));
    s.freeSlots = Integer.parseInt(f.get("freeSlots"));
    s.delta = "1".equals(f.get("delta"));
    s.task = task;
    s.attempt = ints(f.get("attempt"));
    s.node = ints(f.get("node"));
    s.start = ints(f.get("start"));
    s.firstProgressTime = ints(f.get("firstProgressTime"));
    s.report = ints(f.get("report"));
    s.firstProgress = floats(f.get("firstProgress"));
    s.progress = floats(f.get("progress"));
    s.bytesProcessed = doubles(f.get("bytesProcessed"));
    s.inputBytes = doubles(f.get("inputBytes"));
    s.taskType = bytes(f.get("taskType"));
    s.state = bytes(f.get("state"));
    s.speculative = bytes(f.get("speculative"));
    s.doneMapRuntimes = floats(f.get("doneMapRuntimes"));
    s.doneReduceRuntimes = floats(f.get("doneReduceRuntimes"));
    s.removed = ints(f.get("removed"));
    s.removedTask = ints(f.get("removedTask"));
    s.removedNode = ints(f.get("removedNode"));
    s.removedStart = ints(f.get("removedStart"));
    s.removedEnd = ints(f.get("removedEnd"));
    s.removedState = bytes(f.get("removedState"));
    s.removedSpeculative = bytes(f.get("removedSpeculative"));
    s.removedInputBytes = doubles(f.get("removedInputBytes"));
    s.newNodeNames = f.get("nodes").replace('|', '\n').getBytes(StandardCharsets.UTF_8);
    return s;
  }

  private static String[] items(String list) {
    return list.isEmpty() ? new String[0] : list.split(",");
  }

  private static int[] ints(String list) {
    String[] v = items(list);
    int[] out = new int[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = "M".equals(v[i]) ? WireFormat.MISSING : Integer.parseInt(v[i]);
    }
    return out;
  }

  private static float[] floats(String list) {
    String[] v = items(list);
    float[] out = new float[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = Float.parseFloat(v[i]);
    }
    return out;
  }

  private static double[] doubles(String list) {
    String[] v = items(list);
    double[] out = new double[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = "nan".equals(v[i]) ? Double.NaN : Double.parseDouble(v[i]);
    }
    return out;
  }

  private static byte[] bytes(String list) {
    int[] v = ints(list);
    byte[] out = new byte[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = (byte) v[i];
    }
    return out;
  }

  private static String hex(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte x : bytes) {
      out.append(String.format("%02x", x & 0xff));
    }
    return out.toString();
  }

  private static ByteBuffer[] response(int seq, int[] tasks, int[] copies, int[] kills) {
    ByteBuffer head = ByteBuffer.allocate(WireFormat.RESPONSE_HEADER).order(ByteOrder.LITTLE_ENDIAN);
    head.put("HDGR".getBytes(StandardCharsets.US_ASCII)).put((byte) 0).put((byte) 0)
        .putShort((short) 0xfde8).putInt(seq).putInt(15000).putInt(1).putInt(tasks.length)
        .putInt(kills.length).putInt(0);
    ByteBuffer body = ByteBuffer.allocate(4 * (3 * tasks.length + kills.length))
        .order(ByteOrder.LITTLE_ENDIAN);
    for (int t : tasks) body.putInt(t);
    for (int c : copies) body.putInt(c);
    for (int i = 0; i < tasks.length; i++) body.putInt(-1);
    for (int k : kills) body.putInt(k);
    return new ByteBuffer[] {head, body};
  }

  @Test
  void responseDecodesCopiesKillsAndDelay() throws IOException {
    ByteBuffer[] r = response(7, new int[] {2, 0}, new int[] {1, 3}, new int[] {11});
    assertEquals(r[1].capacity(), WireFormat.bodyLength(r[0]));
    Decision d = WireFormat.decode(r[0], r[1], 7, 3);
    assertArrayEquals(new int[] {2, 0}, d.specTask);
    assertArrayEquals(new int[] {1, 3}, d.specCopies);
    assertArrayEquals(new int[] {11}, d.killAttempt);
    assertEquals(15000, d.nextScanMs);
    assertEquals(4, d.copiesRequested());
    assertEquals(true, d.wakeOnCompletion);
    assertEquals(65_000, d.serverCpuMicros); // u16 at offset 6, unsigned
  }

  @Test
  void invalidResponsesAreRejected() {
    ByteBuffer[] late = response(6, new int[0], new int[0], new int[0]);
    assertThrows(IOException.class, () -> WireFormat.decode(late[0], late[1], 7, 3));
    ByteBuffer[] outside = response(7, new int[] {3}, new int[] {1}, new int[0]);
    assertThrows(IOException.class, () -> WireFormat.decode(outside[0], outside[1], 7, 3));
    ByteBuffer[] tooMany = response(7, new int[] {1}, new int[] {1000}, new int[0]);
    assertThrows(IOException.class, () -> WireFormat.decode(tooMany[0], tooMany[1], 7, 3));
    ByteBuffer junk = ByteBuffer.wrap(new byte[WireFormat.RESPONSE_HEADER]);
    assertThrows(IOException.class, () -> WireFormat.bodyLength(junk));
  }
}
