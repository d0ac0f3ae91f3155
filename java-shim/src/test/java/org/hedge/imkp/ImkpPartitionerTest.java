package org.hedge.imkp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.util.ReflectionUtils;
import org.junit.jupiter.api.Test;

class ImkpPartitionerTest {

  static Configuration conf(String mapping, int reduces) {
    Configuration conf = new Configuration(false);
    if (mapping != null) {
      conf.set(ImkpPartitioner.MAPPING, mapping);
    }
    conf.setInt("mapreduce.job.reduces", reduces);
    return conf;
  }

  @Test
  @SuppressWarnings("unchecked")
  void newAndOldApiRouteLikeTheSharedLookupVectors() throws IOException {
    String path = ImkpMappingTest.SMALL.toAbsolutePath().toString();
    ImkpPartitioner<Text, Object> modern =
        ReflectionUtils.newInstance(ImkpPartitioner.class, conf(path, 7));
    JobConf job = new JobConf(conf(path, 7));
    ImkpPartitioner<Object, Object> old = ReflectionUtils.newInstance(ImkpPartitioner.class, job);
    org.apache.hadoop.mapred.Partitioner<Object, Object> oldApi = old;
    List<String> lines = Files.readAllLines(ImkpMappingTest.LOOKUPS, StandardCharsets.UTF_8);
    for (String line : lines) {
      if (line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      String key = new String(Murmur3Test.unhex(f[0]), StandardCharsets.UTF_8);
      int expected = Integer.parseInt(f[1]);
      assertEquals(expected, modern.getPartition(new Text(key), null, 7), key);
      assertEquals(expected, oldApi.getPartition(new Text(key), null, 7), key);
      // non-Text keys go by toString()
      assertEquals(expected, oldApi.getPartition(new StringBuilder(key), null, 7), key);
    }
  }

  @Test
  void fileSystemUriIsReadThroughHadoopFileSystem() {
    String uri = ImkpMappingTest.SMALL.toAbsolutePath().normalize().toUri().toString();
    ImkpPartitioner<Text, Object> p = new ImkpPartitioner<>();
    p.setConf(conf(uri, 7)); // file:///...: the FileSystem branch (as hdfs:// would be)
    assertEquals(7, p.mapping().reducers());
    assertEquals(p.mapping().reducerOf("the"), p.getPartition(new Text("the"), null, 7));
  }

  @Test
  void reducerCountMismatchFailsWithTheFix() {
    String path = ImkpMappingTest.SMALL.toAbsolutePath().toString();
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> new ImkpPartitioner<Text, Object>().setConf(conf(path, 5)));
    assertTrue(e.getMessage().contains("built for 7 reducers but the job has 5 reduce tasks"),
        e.getMessage());
    ImkpPartitioner<Text, Object> p = new ImkpPartitioner<>();
    p.setConf(conf(path, 1)); // reduce count not known from this conf: checked per call
    assertThrows(IllegalStateException.class, () -> p.getPartition(new Text("x"), null, 4));
  }

  @Test
  void missingOrUnsetMappingFailsAndNeverHashes() {
    IllegalStateException missing = assertThrows(IllegalStateException.class,
        () -> new ImkpPartitioner<Text, Object>().setConf(conf("/no/such/job.imkp", 7)));
    assertTrue(missing.getMessage().contains("mapping file not found"), missing.getMessage());
    assertTrue(missing.getMessage().contains("hedge imkp build"), missing.getMessage());
    IllegalStateException unset = assertThrows(IllegalStateException.class,
        () -> new ImkpPartitioner<Text, Object>().setConf(conf(null, 7)));
    assertTrue(unset.getMessage().contains("hedge.imkp.mapping is not set"), unset.getMessage());
  }
}
