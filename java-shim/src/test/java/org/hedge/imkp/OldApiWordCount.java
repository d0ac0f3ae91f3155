package org.hedge.imkp;

import java.io.IOException;
import java.util.Iterator;
import java.util.StringTokenizer;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.FileInputFormat;
import org.apache.hadoop.mapred.FileOutputFormat;
import org.apache.hadoop.mapred.JobClient;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MapReduceBase;
import org.apache.hadoop.mapred.Mapper;
import org.apache.hadoop.mapred.OutputCollector;
import org.apache.hadoop.mapred.Reducer;
import org.apache.hadoop.mapred.Reporter;

/**
 * WordCount on the old {@code org.apache.hadoop.mapred} API with {@link ImkpPartitioner}, in
 * the LocalJobRunner (driven by tests/integration/test_imkp_wordcount.py).
 *
 * <p>Usage: {@code OldApiWordCount input output reducers mapping tmpDir}.
 */
public final class OldApiWordCount {

  private OldApiWordCount() {
  }

  /** Emits (token, 1) for every StringTokenizer token. */
  public static class TokenMapper extends MapReduceBase
      implements Mapper<LongWritable, Text, Text, IntWritable> {
    private static final IntWritable ONE = new IntWritable(1);
    private final Text word = new Text();

    @Override
    public void map(LongWritable key, Text value, OutputCollector<Text, IntWritable> out,
        Reporter reporter) throws IOException {
      StringTokenizer tokens = new StringTokenizer(value.toString());
      while (tokens.hasMoreTokens()) {
        word.set(tokens.nextToken());
        out.collect(word, ONE);
      }
    }
  }

  /** Sums the counts of one word. */
  public static class SumReducer extends MapReduceBase
      implements Reducer<Text, IntWritable, Text, IntWritable> {
    @Override
    public void reduce(Text key, Iterator<IntWritable> values,
        OutputCollector<Text, IntWritable> out, Reporter reporter) throws IOException {
      int sum = 0;
      while (values.hasNext()) {
        sum += values.next().get();
      }
      out.collect(key, new IntWritable(sum));
    }
  }

  public static void main(String[] args) throws IOException {
    JobConf job = new JobConf(OldApiWordCount.class);
    job.set("mapreduce.framework.name", "local");
    job.set("fs.defaultFS", "file:///");
    job.set("hadoop.tmp.dir", args[4]);
    job.setJobName("hedge old-api wordcount");
    job.setMapperClass(TokenMapper.class);
    job.setReducerClass(SumReducer.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(IntWritable.class);
    job.setNumReduceTasks(Integer.parseInt(args[2]));
    job.setPartitionerClass(ImkpPartitioner.class);
    job.set(ImkpPartitioner.MAPPING, args[3]);
    FileInputFormat.setInputPaths(job, new Path(args[0]));
    FileOutputFormat.setOutputPath(job, new Path(args[1]));
    JobClient.runJob(job);
  }
}
