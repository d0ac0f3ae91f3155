package org.hedge.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.hadoop.io.Text;
import org.junit.jupiter.api.Test;

class FirstCharPartitionerTest {

  private final FirstCharPartitioner<Object> partitioner = new FirstCharPartitioner<>();

  @Test
  void routesByFirstCharModuloReducers() {
    assertEquals('a' % 3, partitioner.getPartition(new Text("apple"), null, 3));
    assertEquals('Z' % 7, partitioner.getPartition(new Text("Zebra"), null, 7));
  }

  @Test
  void emptyKeyGoesToReducerZero() {
    assertEquals(0, partitioner.getPartition(new Text(""), null, 5));
  }
}
