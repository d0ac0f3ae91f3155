package org.hedge.imkp;

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

  /** Hash of {@code data[offset, offset + length)} with the given seed. */
  public static int hash32(byte[] data, int offset, int length, int seed) {
    int h = seed;
    int end = offset + (length & ~3);
    for (int i = offset; i < end; i += 4) {
      int k = (data[i] & 0xff) | (data[i + 1] & 0xff) << 8 | (data[i + 2] & 0xff) << 16
          | data[i + 3] << 24;
      h ^= mixK(k);
      h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
    }
    if (length > 0) {
      // Tail (length & 3 bytes) without a branch on its length, which short keys would
      // mispredict about every other time: read the 3 bytes after the last block, clamped to
      // the key's last byte (cmov), and mask off those past the key (all of them when the
      // tail is empty, and mixK(0) == 0 leaves h unchanged, as in the reference).
      int last = offset + length - 1;
      int k = ((data[Math.min(end, last)] & 0xff)
          | (data[Math.min(end + 1, last)] & 0xff) << 8
          | (data[Math.min(end + 2, last)] & 0xff) << 16) & ((1 << ((length & 3) << 3)) - 1);
      h ^= mixK(k);
    }
    h ^= length;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
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
