package org.hedge.tools;

import java.io.IOException;
import java.util.StringTokenizer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Partitioner;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * The classic WordCount (tokens split as {@link StringTokenizer} does), with a configurable
 * partitioner and reducer count, used by hedge's integration tests and cluster demo.
 *
 * <p>Usage: {@code WordCount [-D prop=value ...] <input> <output> <reducers> [partitionerClass]}.
 * No combiner, so each reducer's input record count equals the number of word occurrences
 * routed to it (the ImKP tests compare it with the mapping's predicted loads).
 */
public class WordCount extends Configured implements Tool {

  /** Emits (word, 1) for every token. */
  public static class TokenMapper extends Mapper<Object, Text, Text, IntWritable> {
    private static final IntWritable ONE = new IntWritable(1);
    private final Text word = new Text();

    @Override
    protected void map(Object key, Text value, Context context)
        throws IOException, InterruptedException {
      StringTokenizer tokens = new StringTokenizer(value.toString());
      while (tokens.hasMoreTokens()) {
        word.set(tokens.nextToken());
        context.write(word, ONE);
      }
    }
  }

  /** Sums the counts of one word. */
  public static class SumReducer extends Reducer<Text, IntWritable, Text, IntWritable> {
    private final IntWritable total = new IntWritable();

    @Override
    protected void reduce(Text key, Iterable<IntWritable> values, Context context)
        throws IOException, InterruptedException {
      int sum = 0;
      for (IntWritable v : values) {
        sum += v.get();
      }
      total.set(sum);
      context.write(key, total);
    }
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public int run(String[] args) throws Exception {
    if (args.length < 3 || args.length > 4) {
      System.err.println("usage: WordCount [-D k=v ...] <input> <output> <reducers> [partitionerClass]");
      return 2;
    }
    Job job = Job.getInstance(getConf(), "hedge wordcount");
    job.setJarByClass(WordCount.class);
    job.setMapperClass(TokenMapper.class);
    job.setReducerClass(SumReducer.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(IntWritable.class);
    job.setNumReduceTasks(Integer.parseInt(args[2]));
    if (args.length == 4) {
      job.setPartitionerClass((Class<? extends Partitioner>) Class.forName(args[3]));
    }
    FileInputFormat.addInputPath(job, new Path(args[0]));
    FileOutputFormat.setOutputPath(job, new Path(args[1]));
    return job.waitForCompletion(true) ? 0 : 1;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new WordCount(), args));
  }
}
