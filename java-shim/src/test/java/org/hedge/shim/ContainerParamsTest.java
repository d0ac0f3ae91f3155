package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.junit.jupiter.api.Test;

/** The job's map container travels with the policy parameters where the job sets it. */
class ContainerParamsTest {
  @Test
  void onlyTheSizesTheJobSetsAreSent() {
    Configuration conf = new Configuration(false);
    assertEquals("", HedgeSpeculator.containerParams(conf));
    conf.setInt(MRJobConfig.MAP_MEMORY_MB, 2048);
    conf.setInt(MRJobConfig.MAP_CPU_VCORES, 2);
    assertEquals("mapreduce.map.memory.mb=2048\nmapreduce.map.cpu.vcores=2\n",
        HedgeSpeculator.containerParams(conf));
    // Hadoop 3's default memory, -1, means "derive it from the heap": not sent
    conf.setInt(MRJobConfig.MAP_MEMORY_MB, -1);
    assertEquals("mapreduce.map.cpu.vcores=2\n", HedgeSpeculator.containerParams(conf));
  }
}
