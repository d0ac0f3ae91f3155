package org.hedge.cluster;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapreduce.InputFormat;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * A MapReduce job with one injected straggler: attempt 0 of one map task works through its
 * records {@code hedge.test.straggler.slowdown} times slower than every other attempt, still
 * reporting progress as it goes (a slow task, not a hung one). Every attempt of a task emits
 * the same records, so the output does not depend on which attempt wins.
 *
 * <p>Usage (through ToolRunner: {@code -conf cluster.xml -D name=value} first):
 * {@code StragglerJob --out DIR --summary FILE}. Shape, all {@code -D} settings:
 * hedge.test.maps (4), hedge.test.records (10), hedge.test.record.ms (300),
 * hedge.test.straggler.task (0; -1: none), hedge.test.straggler.slowdown (20),
 * hedge.test.straggler.attempts (1: attempts 0 .. N-1 of the straggler task are slow, so with 2
 * the first copy is slow as well and only a later one runs at the normal pace),
 * hedge.test.straggler.host (unset; a host: in place of the attempts rule, every attempt of the
 * straggler task that runs on that NodeManager host is slow, as on a bad node).
 * The summary (JSON, {@link JobSummary}) has the job's state, times, counters and every
 * attempt's end.
 */
public final class StragglerJob extends Configured implements Tool {
  static final String MAPS = "hedge.test.maps";
  static final String RECORDS = "hedge.test.records";
  static final String RECORD_MS = "hedge.test.record.ms";
  static final String STRAGGLER_TASK = "hedge.test.straggler.task";
  static final String STRAGGLER_SLOWDOWN = "hedge.test.straggler.slowdown";
  static final String STRAGGLER_ATTEMPTS = "hedge.test.straggler.attempts";
  static final String STRAGGLER_HOST = "hedge.test.straggler.host";
  /** Records emitted per input record, over KEY_SPACE keys whose counts differ. */
  static final int EMITS = 50;
  static final int KEY_SPACE = 97;

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new StragglerJob(), args));
  }

  @Override
  public int run(String[] args) throws Exception {
    String out = null;
    String summary = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--out")) {
        out = args[++i];
      } else if (args[i].equals("--summary")) {
        summary = args[++i];
      } else {
        throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (out == null || summary == null) {
      throw new IllegalArgumentException("--out and --summary are required");
    }
    Job job = Job.getInstance(getConf(), "hedge-straggler");
    job.setJarByClass(StragglerJob.class);
    job.setInputFormatClass(SyntheticInputFormat.class);
    job.setMapperClass(SlowMapper.class);
    job.setCombinerClass(LongSumReducer.class);
    job.setReducerClass(LongSumReducer.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(LongWritable.class);
    job.setOutputFormatClass(TextOutputFormat.class);
    job.setNumReduceTasks(1);
    TextOutputFormat.setOutputPath(job, new Path(out));
    long started = System.currentTimeMillis();
    boolean ok = job.waitForCompletion(false);
    JobSummary.write(job, started, new java.io.File(summary));
    return ok ? 0 : 1;
  }

  /** Emits EMITS keys per record; the straggler task's first attempts sleep longer per record. */
  public static final class SlowMapper
      extends Mapper<LongWritable, NullWritable, Text, LongWritable> {
    private final Text key = new Text();
    private final LongWritable one = new LongWritable(1);
    private long sleepMs;

    @Override
    protected void setup(Context context) {
      Configuration conf = context.getConfiguration();
      sleepMs = conf.getLong(RECORD_MS, 300);
      String slowHost = conf.getTrimmed(STRAGGLER_HOST, "");
      // NM_HOST: the host of the NodeManager running this container (set by YARN)
      boolean slow = slowHost.isEmpty()
          ? context.getTaskAttemptID().getId() < conf.getInt(STRAGGLER_ATTEMPTS, 1)
          : slowHost.equals(System.getenv("NM_HOST"));
      boolean straggler = context.getTaskAttemptID().getTaskID().getId()
          == conf.getInt(STRAGGLER_TASK, 0) && slow;
      if (straggler) {
        sleepMs *= conf.getInt(STRAGGLER_SLOWDOWN, 20);
      }
    }

    @Override
    protected void map(LongWritable record, NullWritable value, Context context)
        throws IOException, InterruptedException {
      Thread.sleep(sleepMs);
      for (int k = 0; k < EMITS; k++) {
        key.set("key-" + ((record.get() * 31 + (long) k * k) % KEY_SPACE));
        context.write(key, one);
      }
    }
  }

  /** hedge.test.maps splits of hedge.test.records records each; no input files. */
  public static final class SyntheticInputFormat extends InputFormat<LongWritable, NullWritable> {
    @Override
    public List<InputSplit> getSplits(JobContext context) {
      List<InputSplit> splits = new ArrayList<>();
      Configuration conf = context.getConfiguration();
      int records = conf.getInt(RECORDS, 10);
      for (int i = 0; i < conf.getInt(MAPS, 4); i++) {
        splits.add(new CountSplit((long) i * records, records));
      }
      return splits;
    }

    @Override
    public RecordReader<LongWritable, NullWritable> createRecordReader(InputSplit split,
        TaskAttemptContext context) {
      return new CountReader();
    }
  }

  /** A range of record numbers. */
  public static final class CountSplit extends InputSplit implements Writable {
    long first;
    long count;

    public CountSplit() {}

    CountSplit(long first, long count) {
      this.first = first;
      this.count = count;
    }

    @Override
    public long getLength() {
      return count;
    }

    @Override
    public String[] getLocations() {
      return new String[0];
    }

    @Override
    public void write(DataOutput out) throws IOException {
      out.writeLong(first);
      out.writeLong(count);
    }

    @Override
    public void readFields(DataInput in) throws IOException {
      first = in.readLong();
      count = in.readLong();
    }
  }

  /** Reads a CountSplit's numbers; progress is the fraction read (what the AM sees). */
  public static final class CountReader extends RecordReader<LongWritable, NullWritable> {
    private CountSplit split;
    private long read;
    private final LongWritable key = new LongWritable();

    @Override
    public void initialize(InputSplit s, TaskAttemptContext context) {
      split = (CountSplit) s;
    }

    @Override
    public boolean nextKeyValue() {
      if (read >= split.count) {
        return false;
      }
      key.set(split.first + read++);
      return true;
    }

    @Override
    public LongWritable getCurrentKey() {
      return key;
    }

    @Override
    public NullWritable getCurrentValue() {
      return NullWritable.get();
    }

    @Override
    public float getProgress() {
      return split.count == 0 ? 1f : (float) read / split.count;
    }

    @Override
    public void close() {}
  }
}
