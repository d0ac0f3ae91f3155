package org.hedge.shim;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Encoder of scan requests and decoder of responses; the byte layout is specified in
 * docs/wire-format.md and mirrored by hedge.server.wire (little-endian, packed columns).
 */
final class WireFormat {
  /**
   * 2: each ended attempt carries its start, end, final state and copy flag; 3: each ended
   * attempt also carries its task, node and input bytes, and a full snapshot carries every
   * attempt the job has ended.
   */
  static final int VERSION = 3;
  static final int MISSING = Integer.MIN_VALUE;
  static final int REQUEST_HEADER = 88;
  static final int FLAG_DELTA = 1;
  static final int RESPONSE_HEADER = 32;
  static final int ROW_BYTES = 51;
  static final int ENDED_BYTES = 30;
  static final int HELLO_BYTES = 32;
  static final int MAX_COPIES = 64;

  private WireFormat() {}

  /** The handshake that binds a data connection to a session. */
  static byte[] hello(long sessionId, byte[] secret) {
    ByteBuffer b = ByteBuffer.allocate(HELLO_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    b.put(ascii("HDGH")).putShort((short) VERSION).putShort((short) 0).putLong(sessionId);
    b.put(secret, 0, 16);
    return b.array();
  }

  static int bodySize(Scan s) {
    return s.rows * ROW_BYTES + 4 * (s.doneMapRuntimes.length + s.doneReduceRuntimes.length)
        + ENDED_BYTES * s.removed.length + s.newNodeNames.length;
  }

  /** The request frame (header + body) for one scan, in a buffer ready to write. */
  static ByteBuffer encode(Scan s, ByteBuffer reuse) {
    int body = bodySize(s);
    int size = REQUEST_HEADER + body;
    ByteBuffer b = reuse != null && reuse.capacity() >= size ? reuse : ByteBuffer.allocate(size);
    b.clear();
    b.order(ByteOrder.LITTLE_ENDIAN);
    b.put(ascii("HDGS")).putShort((short) VERSION).putShort((short) (s.delta ? FLAG_DELTA : 0))
        .putInt(s.seq).putInt(body);
    b.putLong(s.nowMs).putLong(s.jobStartMs).putLong(s.deadlineMs);
    b.putInt(s.nMaps).putInt(s.nReduces).putInt(s.rows);
    b.putInt(s.doneMapRuntimes.length).putInt(s.doneReduceRuntimes.length);
    b.putInt(s.nodeBase).putInt(s.newNodeNames.length).putInt(s.fallbacks);
    b.putInt(s.totalSlots).putInt(s.freeSlots).putInt(s.removed.length).putInt(0);
    int n = s.rows;
    // bulk copies through view buffers (they inherit the little-endian order)
    b.asDoubleBuffer().put(s.bytesProcessed, 0, n);
    b.position(b.position() + 8 * n);
    b.asDoubleBuffer().put(s.inputBytes, 0, n);
    b.position(b.position() + 8 * n);
    putInts(b, s.task, n);
    putInts(b, s.attempt, n);
    putInts(b, s.node, n);
    putInts(b, s.start, n);
    putInts(b, s.firstProgressTime, n);
    putInts(b, s.report, n);
    b.asFloatBuffer().put(s.firstProgress, 0, n);
    b.position(b.position() + 4 * n);
    b.asFloatBuffer().put(s.progress, 0, n);
    b.position(b.position() + 4 * n);
    b.put(s.taskType, 0, n).put(s.state, 0, n).put(s.speculative, 0, n);
    for (float f : s.doneMapRuntimes) b.putFloat(f);
    for (float f : s.doneReduceRuntimes) b.putFloat(f);
    int e = s.removed.length;
    b.asDoubleBuffer().put(s.removedInputBytes, 0, e);
    b.position(b.position() + 8 * e);
    putInts(b, s.removed, e);
    putInts(b, s.removedTask, e);
    putInts(b, s.removedNode, e);
    putInts(b, s.removedStart, e);
    putInts(b, s.removedEnd, e);
    b.put(s.removedState, 0, e).put(s.removedSpeculative, 0, e);
    b.put(s.newNodeNames);
    b.flip();
    return b;
  }

  private static void putInts(ByteBuffer b, int[] values, int n) {
    b.asIntBuffer().put(values, 0, n);
    b.position(b.position() + 4 * n);
  }

  /** Parse a response header; returns the body length still to read. */
  static int bodyLength(ByteBuffer header) throws IOException {
    header.order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[4];
    for (int i = 0; i < 4; i++) magic[i] = header.get(i);
    if (!"HDGR".equals(new String(magic, StandardCharsets.US_ASCII))) {
      throw new IOException("bad response magic");
    }
    long n = header.getInt(20) & 0xffffffffL;
    long k = header.getInt(24) & 0xffffffffL;
    long msg = header.getInt(28) & 0xffffffffL;
    long total = 4 * (3 * n + k) + msg;
    if (n > 1_000_000 || k > 1_000_000 || msg > 65536) {
      throw new IOException("response sizes out of bounds: " + n + " copies, " + k + " kills");
    }
    return (int) total;
  }

  /**
   * Decode and check a response: its sequence number must echo the request's, task indices
   * must lie in [0, nTasks) and copies in [1, MAX_COPIES]. Anything else is an IOException
   * (the caller falls back and drops the connection).
   */
  static Decision decode(ByteBuffer header, ByteBuffer body, int expectedSeq, int nTasks)
      throws IOException {
    header.order(ByteOrder.LITTLE_ENDIAN);
    body.order(ByteOrder.LITTLE_ENDIAN);
    Decision d = new Decision();
    d.status = header.get(4) & 0xff;
    d.serverCpuMicros = header.getShort(6) & 0xffff;
    d.seq = header.getInt(8);
    d.nextScanMs = header.getInt(12);
    d.wakeOnCompletion = (header.getInt(16) & 1) != 0;
    int n = header.getInt(20);
    int k = header.getInt(24);
    int msg = header.getInt(28);
    if (d.seq != expectedSeq) {
      throw new IOException("response to scan " + d.seq + ", expected " + expectedSeq);
    }
    if (d.status != Decision.STATUS_OK && d.status != Decision.STATUS_REJECTED) {
      throw new IOException("unknown response status " + d.status);
    }
    d.specTask = ints(body, 0, n);
    d.specCopies = ints(body, 4 * n, n);
    d.preferNode = ints(body, 8 * n, n);
    d.killAttempt = ints(body, 12 * n, k);
    byte[] text = new byte[msg];
    for (int i = 0; i < msg; i++) text[i] = body.get(4 * (3 * n + k) + i);
    d.message = new String(text, StandardCharsets.UTF_8);
    for (int i = 0; i < n; i++) {
      if (d.specTask[i] < 0 || d.specTask[i] >= nTasks) {
        throw new IOException("response names task " + d.specTask[i] + " of " + nTasks);
      }
      if (d.specCopies[i] < 1 || d.specCopies[i] > MAX_COPIES) {
        throw new IOException("response asks " + d.specCopies[i] + " copies");
      }
    }
    if (d.nextScanMs < -1) {
      throw new IOException("response asks a negative scan delay " + d.nextScanMs);
    }
    return d;
  }

  private static int[] ints(ByteBuffer b, int offset, int n) {
    int[] out = new int[n];
    for (int i = 0; i < n; i++) out[i] = b.getInt(offset + 4 * i);
    return out;
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
