package org.hedge.imkp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * An ImKP mapping read from its file (layout in {@code docs/imkp-format.md}, written by
 * {@code hedge imkp build}): a key goes to its heavy-key entry's reducer if it is one of the
 * heavy keys, else to the reducer of group {@code unsigned(murmur3_32(utf8(key), seed)) mod G}.
 *
 * <p>Parsing validates everything (magic, version, hash id, sizes, CRC-32, reducer indices)
 * and throws an {@link IOException} that names the file, the defect and the fix. Heavy keys
 * sit in an open-addressing table keyed by the same Murmur3 hash, so a lookup costs one hash
 * of the key bytes plus, for heavy keys, one byte comparison.
 */
public final class ImkpMapping {
  static final byte[] MAGIC = "HEDGEIMK".getBytes(StandardCharsets.US_ASCII);
  static final int VERSION = 1;
  static final int HASH_MURMUR3 = 1;
  static final int HEADER_BYTES = 64;
  static final int CHECKSUM_AT = 56;
  /**
   * Header flags (bytes 60-63, outside the checksum; 0 in earlier files): bit 0 = the heaviest
   * field is a bound no key exceeds, the exact count not kept. Other bits are rejected.
   */
  static final int HEAVIEST_IS_BOUND = 1;
  static final int KNOWN_FLAGS = HEAVIEST_IS_BOUND;

  private final int reducers;
  private final int groups;
  private final int scale;
  private final int seed;
  private final long total;
  private final long heaviestKeyCount;
  private final boolean heaviestIsBound;
  private final int[] groupReducer;
  private final long[] groupCount;
  private final byte[][] heavyKeys;
  private final int[] heavyReducer;
  private final long[] heavyCount;
  // Heavy-key hash table, open addressing: slot s is slots[4s .. 4s + 3] = the key's Murmur3
  // hash, where its bytes start in keyPool, its length (-1 = empty slot) and its reducer, so a
  // probe reads one cache line of slots and one of the pool, with no object to dereference
  // (the byte[] of each key would be one more dependent load, and the records of a job are
  // spread through the heap, so every line the partitioner touches competes with them).
  private final int[] slots;
  private final byte[] keyPool;
  private final int[] groupRoute; // reducer, or ~reducer when heavy keys hash to the group
  private final int slotMask;
  private final long groupMagic; // for the division-free hash mod G (Murmur3.group)

  private ImkpMapping(int reducers, int groups, int scale, int seed, long total, long heaviest,
      boolean heaviestIsBound, int[] groupReducer, long[] groupCount, byte[][] heavyKeys,
      int[] heavyReducer, long[] heavyCount) {
    this.reducers = reducers;
    this.groups = groups;
    this.scale = scale;
    this.seed = seed;
    this.total = total;
    this.heaviestKeyCount = heaviest;
    this.heaviestIsBound = heaviestIsBound;
    this.groupReducer = groupReducer;
    this.groupCount = groupCount;
    this.heavyKeys = heavyKeys;
    this.heavyReducer = heavyReducer;
    this.heavyCount = heavyCount;
    this.groupMagic = Murmur3.groupMagic(groups);
    int size = Integer.highestOneBit(Math.max(2, heavyKeys.length * 2 - 1)) << 1;
    this.slots = new int[4 * size];
    this.slotMask = size - 1;
    this.groupRoute = groupReducer.clone();
    int poolBytes = 0;
    for (byte[] key : heavyKeys) {
      poolBytes += key.length;
    }
    this.keyPool = new byte[poolBytes];
    for (int s = 0; s < size; s++) {
      slots[4 * s + 2] = -1;
    }
    int at = 0;
    for (int i = 0; i < heavyKeys.length; i++) {
      byte[] key = heavyKeys[i];
      int hash = Murmur3.hash32(key, 0, key.length, seed);
      int s = hash & slotMask;
      while (slots[4 * s + 2] >= 0) {
        s = (s + 1) & slotMask;
      }
      System.arraycopy(key, 0, keyPool, at, key.length);
      slots[4 * s] = hash;
      slots[4 * s + 1] = at;
      slots[4 * s + 2] = key.length;
      slots[4 * s + 3] = heavyReducer[i];
      at += key.length;
      int g = Murmur3.group(hash, groups);
      groupRoute[g] = ~groupReducer[g];
    }
  }

  /** Parse and validate mapping-file bytes; {@code source} names the file in messages. */
  public static ImkpMapping parse(byte[] data, String source) throws IOException {
    String rebuild = "; rebuild it with 'hedge imkp build INPUT... --reducers R -o " + source
        + "' and point hedge.imkp.mapping at it";
    if (data.length < HEADER_BYTES) {
      throw new IOException(source + ": truncated or not an ImKP mapping file (" + data.length
          + " bytes, the header alone is " + HEADER_BYTES + ")" + rebuild);
    }
    ByteBuffer in = ByteBuffer.wrap(data);
    byte[] magic = new byte[8];
    in.get(magic);
    if (!Arrays.equals(magic, MAGIC)) {
      throw new IOException(source + ": not an ImKP mapping file (no 'HEDGEIMK' magic)"
          + rebuild);
    }
    int version = in.getShort() & 0xffff;
    if (version != VERSION) {
      throw new IOException(source + ": ImKP mapping file version " + version
          + ", this shim reads version " + VERSION + rebuild + " with the matching hedge");
    }
    int hashId = in.getShort() & 0xffff;
    if (hashId != HASH_MURMUR3) {
      throw new IOException(source + ": unknown key hash id " + hashId
          + " (expected 1 = murmur3_32)" + rebuild);
    }
    int seed = in.getInt();
    long reducers = in.getInt() & 0xffffffffL;
    long groups = in.getInt() & 0xffffffffL;
    long scale = in.getInt() & 0xffffffffL;
    long heavy = in.getInt() & 0xffffffffL;
    long total = in.getLong();
    long heaviest = in.getLong();
    long bodyLength = in.getLong();
    int checksum = in.getInt();
    int flags = in.getInt();
    long actualBody = data.length - HEADER_BYTES;
    if (bodyLength != actualBody) {
      throw new IOException(source + ": ImKP mapping file "
          + (actualBody < bodyLength ? "truncated" : "has trailing bytes") + ": header says "
          + bodyLength + " body bytes, file has " + actualBody + rebuild);
    }
    CRC32 crc = new CRC32();
    crc.update(data, 0, CHECKSUM_AT);
    crc.update(data, HEADER_BYTES, data.length - HEADER_BYTES);
    if ((int) crc.getValue() != checksum) {
      throw new IOException(source + ": ImKP mapping file corrupted (checksum mismatch)"
          + rebuild);
    }
    if ((flags & ~KNOWN_FLAGS) != 0) {
      throw new IOException(source + ": unknown header flags 0x" + Integer.toHexString(flags)
          + " (this shim knows 0x" + Integer.toHexString(KNOWN_FLAGS)
          + " = heaviest-key count is a bound)" + rebuild + " with the matching hedge");
    }
    if (reducers < 1 || groups < reducers || groups > Integer.MAX_VALUE || scale < 1
        || 12L * groups > bodyLength) {
      throw new IOException(source + ": invalid header (reducers=" + reducers + ", groups="
          + groups + ", scale=" + scale + ")" + rebuild);
    }
    in.position(HEADER_BYTES);
    int g = (int) groups;
    int[] groupReducer = new int[g];
    long[] groupCount = new long[g];
    for (int i = 0; i < g; i++) {
      groupReducer[i] = checkReducer(in.getInt(), reducers, source, rebuild);
    }
    for (int i = 0; i < g; i++) {
      groupCount[i] = in.getLong();
    }
    if (heavy > (bodyLength - 12L * groups) / 16) {
      throw new IOException(source + ": heavy-key count " + heavy + " does not fit the file"
          + rebuild);
    }
    int k = (int) heavy;
    byte[][] keys = new byte[k][];
    int[] keyReducer = new int[k];
    long[] keyCount = new long[k];
    for (int i = 0; i < k; i++) {
      if (in.remaining() < 16) {
        throw new IOException(source + ": heavy-key table ends early at entry " + i + rebuild);
      }
      keyReducer[i] = checkReducer(in.getInt(), reducers, source, rebuild);
      keyCount[i] = in.getLong();
      long length = in.getInt() & 0xffffffffL;
      if (length > in.remaining()) {
        throw new IOException(source + ": heavy key " + i + " runs past the end of the file"
            + rebuild);
      }
      keys[i] = new byte[(int) length];
      in.get(keys[i]);
    }
    if (in.remaining() != 0) {
      throw new IOException(source + ": " + in.remaining()
          + " unexpected bytes after the heavy-key table" + rebuild);
    }
    return new ImkpMapping((int) reducers, g, (int) scale, seed, total, heaviest,
        (flags & HEAVIEST_IS_BOUND) != 0, groupReducer, groupCount, keys, keyReducer, keyCount);
  }

  private static int checkReducer(int reducer, long reducers, String source, String rebuild)
      throws IOException {
    if (reducer < 0 || reducer >= reducers) {
      throw new IOException(source + ": reducer index " + (reducer & 0xffffffffL)
          + " out of range for " + reducers + " reducers" + rebuild);
    }
    return reducer;
  }

  /**
   * Reducer of the key whose UTF-8 bytes are {@code bytes[0, length)}: one Murmur3 pass over
   * the bytes, a multiply-based mod G, one int-array load; the heavy-key table is probed only
   * when a heavy key hashes to the key's group (the group's entry is then ~reducer).
   */
  public int reducerOf(byte[] bytes, int length) {
    int hash = Murmur3.hash32(bytes, 0, length, seed);
    int route = groupRoute[Murmur3.group(hash, groups, groupMagic)];
    if (route >= 0) {
      return route; // no heavy key hashes to this group: no table probe
    }
    int s = (hash & slotMask) << 2;
    int stored;
    while ((stored = slots[s + 2]) >= 0) {
      if (slots[s] == hash && stored == length && equal(keyPool, slots[s + 1], bytes, length)) {
        return slots[s + 3];
      }
      s = (s + 4) & (slots.length - 1);
    }
    return ~route;
  }

  /** Reducer of a key given as text. */
  public int reducerOf(String key) {
    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
    return reducerOf(bytes, bytes.length);
  }

  /**
   * Whether {@code pool[at, at + length)} equals {@code b[0, length)}: four bytes per compare
   * through ByteBuffer views (one load each, see {@link Murmur3#hash32}), the last four
   * overlapping the ones before when the length is not a multiple of four.
   */
  static boolean equal(byte[] pool, int at, byte[] b, int length) {
    if (length < 4) {
      for (int i = 0; i < length; i++) {
        if (pool[at + i] != b[i]) {
          return false;
        }
      }
      return true;
    }
    ByteBuffer view = ByteBuffer.wrap(pool);
    ByteBuffer key = ByteBuffer.wrap(b);
    int last = length - 4;
    for (int i = 0; i < last; i += 4) {
      if (view.getInt(at + i) != key.getInt(i)) {
        return false;
      }
    }
    return view.getInt(at + last) == key.getInt(last);
  }

  /** Predicted input records per reducer. */
  public long[] loads() {
    long[] loads = new long[reducers];
    for (int i = 0; i < groups; i++) {
      loads[groupReducer[i]] += groupCount[i];
    }
    for (int i = 0; i < heavyKeys.length; i++) {
      loads[heavyReducer[i]] += heavyCount[i];
    }
    return loads;
  }

  public int reducers() {
    return reducers;
  }

  public int groups() {
    return groups;
  }

  public int scale() {
    return scale;
  }

  public int heavyKeyCount() {
    return heavyKeys.length;
  }

  public long total() {
    return total;
  }

  /**
   * Records of the heaviest key, or, when {@link #heaviestKeyIsBound()}, a bound no key
   * exceeds (the build's key table overflowed and the exact count was not kept).
   */
  public long heaviestKeyCount() {
    return heaviestKeyCount;
  }

  /** True when {@link #heaviestKeyCount()} is only a bound (header flag bit 0). */
  public boolean heaviestKeyIsBound() {
    return heaviestIsBound;
  }
}
