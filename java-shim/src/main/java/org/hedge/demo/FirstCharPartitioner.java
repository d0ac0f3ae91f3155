package org.hedge.demo;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Partitioner;

/**
 * A deliberately simple, fully predictable partitioner: a key goes to reducer
 * {@code (first UTF-16 char of key.toString()) mod numPartitions}; the empty key goes to 0.
 *
 * <p>It exists to prove the build-and-run chain (our jar, loaded by a real MapReduce job,
 * routes each key where we say). Tests compute the same function in Python and check every
 * reducer's output holds exactly the keys sent there. Real jobs use {@code ImkpPartitioner}.
 */
public class FirstCharPartitioner<V> extends Partitioner<Text, V> {

  @Override
  public int getPartition(Text key, V value, int numPartitions) {
    String s = key.toString();
    return s.isEmpty() ? 0 : s.charAt(0) % numPartitions;
  }
}
