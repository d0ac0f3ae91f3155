package org.hedge.imkp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * MurmurHash3 x86 32-bit (Austin Appleby's reference {@code MurmurHash3_x86_32}) over a byte
 * range. ImKP sends a key to group {@code unsigned(hash(utf8(key.toString()), seed)) mod G}.
 *
 * <p>The Python twin is {@code hedge.imkp.hashing.murmur3_32}; both are checked against the
 * shared vectors in {@code tests/data/imkp_hash_vectors.tsv}.
 */
public final class Murmur3 {
  private static final int C1 = 0xcc9e2d51;
  private static final int C2 = 0x1b873593;

  private Murmur3() {
  }

  /**
   * Hash of {@code data[offset, offset + length)} with the given seed.
   *
   * <p>Blocks are read as little-endian ints through a {@link ByteBuffer} view: since Java 9
   * the JIT turns each {@code getInt} into one load, where assembling four bytes took four
   * loads, three shifts and three ors, and the view is never allocated once this is inlined
   * (escape analysis). The partitioner is memory-bound (a record's Text is often a cache
   * miss), so fewer instructions per record let more records' misses overlap.
   */
  public static int hash32(byte[] data, int offset, int length, int seed) {
    ByteBuffer view = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
    int h = seed;
    int end = offset + (length & ~3);
    for (int i = offset; i < end; i += 4) {
      h ^= mixK(view.getInt(i));
      h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
    }
    h ^= mixK(tail(data, view, offset, length));
    h ^= length;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
  }

  /**
   * The last {@code length & 3} bytes as a little-endian int (0 when there are none, and
   * mixK(0) == 0 leaves the hash unchanged, as the reference's skipped tail does).
   */
  private static int tail(byte[] data, ByteBuffer view, int offset, int length) {
    if (length >= 4) {
      // the key's last 4 bytes, shifted so only the tail's remain (a shift by 32 of the
      // long clears all of them when the tail is empty)
      long last = view.getInt(offset + length - 4) & 0xffffffffL;
      return (int) (last >>> ((4 - (length & 3)) << 3));
    }
    if (length == 0) {
      return 0;
    }
    // 1-3 bytes: read 3 clamped to the last byte (cmov, no branch on the length), mask the rest
    int last = offset + length - 1;
    return ((data[offset] & 0xff) | (data[Math.min(offset + 1, last)] & 0xff) << 8
        | (data[Math.min(offset + 2, last)] & 0xff) << 16) & ((1 << (length << 3)) - 1);
  }

  private static int mixK(int k) {
    return Integer.rotateLeft(k * C1, 15) * C2;
  }

  /** Group of a hash among {@code groups} groups: the hash as unsigned 32-bit, mod groups. */
  public static int group(int hash, int groups) {
    // int division when the hash is non-negative (half the keys): cheaper than a long one
    return hash >= 0 ? hash % groups : (int) ((hash & 0xffffffffL) % groups);
  }

  /**
   * The constant {@code M = floor((2^64 - 1) / groups) + 1} (mod 2^64) for
   * {@link #group(int, int, long)}.
   */
  public static long groupMagic(int groups) {
    if (groups < 1) {
      throw new IllegalArgumentException("groups must be >= 1, got " + groups);
    }
    return Long.divideUnsigned(-1L, groups) + 1;
  }

  /**
   * The same as {@link #group(int, int)} without a division: Lemire, Kaser and Kurz (2019),
   * "Faster remainder by direct computation": for a 32-bit n and 32-bit d, n mod d is the high
   * 64 bits of {@code low64(M * n) * d}, M from {@link #groupMagic}. The 64x32-bit high product
   * is formed from two 32x32-bit products (Java 8 has no {@code Math.multiplyHigh}).
   */
  public static int group(int hash, int groups, long magic) {
    long low = magic * (hash & 0xffffffffL);
    return (int) (((low >>> 32) * groups + (((low & 0xffffffffL) * groups) >>> 32)) >>> 32);
  }
}
