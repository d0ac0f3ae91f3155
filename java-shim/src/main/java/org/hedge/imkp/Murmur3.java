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
    int k = 0;
    switch (length & 3) {
      case 3:
        k ^= (data[end + 2] & 0xff) << 16;
        // fall through
      case 2:
        k ^= (data[end + 1] & 0xff) << 8;
        // fall through
      case 1:
        k ^= data[end] & 0xff;
        h ^= mixK(k);
        break;
      default:
        break;
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
}
