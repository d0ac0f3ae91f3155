package org.hedge.imkp;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.KeyValueTextInputFormat;
import org.apache.hadoop.mapreduce.lib.partition.InputSampler;
import org.apache.hadoop.mapreduce.lib.partition.TotalOrderPartitioner;

/**
 * Hadoop's own skew-aware option for the ImKP benchmark: {@link InputSampler} split points
 * for {@link TotalOrderPartitioner}. The input holds one key per line (read with
 * {@link KeyValueTextInputFormat}, so each line is a Text key, as WordCount's map output).
 *
 * <p>Usage: {@code TotalOrderSplits words.txt outDir R...}; writes {@code outDir/splits-R}
 * (the partition file a job passes as {@code mapreduce.totalorderpartitioner.path}) and
 * prints {@code R TAB hex(split point)} lines, or {@code R TAB ERROR TAB message}.
 */
public final class TotalOrderSplits {

  private TotalOrderSplits() {
  }

  public static void main(String[] args) throws Exception {
    for (int i = 2; i < args.length; i++) {
      int reducers = Integer.parseInt(args[i]);
      Path file = new Path(args[1], "splits-" + reducers);
      try {
        write(args[0], file, reducers);
        print(file, reducers);
      } catch (RuntimeException | IOException e) {
        System.out.println(reducers + "\tERROR\t" + e);
      }
    }
  }

  static void write(String input, Path file, int reducers) throws Exception {
    Configuration conf = new Configuration();
    conf.set("mapreduce.framework.name", "local");
    conf.set("fs.defaultFS", "file:///");
    Job job = Job.getInstance(conf);
    job.setInputFormatClass(KeyValueTextInputFormat.class);
    job.setMapOutputKeyClass(Text.class);
    job.setNumReduceTasks(reducers);
    FileInputFormat.addInputPath(job, new Path(input));
    TotalOrderPartitioner.setPartitionFile(job.getConfiguration(), file);
    InputSampler.writePartitionFile(job, new InputSampler.RandomSampler<Text, Text>(0.1, 10000, 10));
  }

  static void print(Path file, int reducers) throws IOException {
    Configuration conf = new Configuration();
    conf.set("fs.defaultFS", "file:///");
    SequenceFile.Reader reader = new SequenceFile.Reader(conf, SequenceFile.Reader.file(file));
    try {
      Text key = new Text();
      NullWritable value = NullWritable.get();
      while (reader.next(key, value)) {
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < key.getLength(); i++) {
          hex.append(String.format("%02x", key.getBytes()[i] & 0xff));
        }
        System.out.println(reducers + "\t" + hex);
      }
    } finally {
      reader.close();
    }
  }
}
