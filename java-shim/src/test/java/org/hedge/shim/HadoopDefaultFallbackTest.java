package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.app.speculate.TaskRuntimeEstimator;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.junit.jupiter.api.Test;

/**
 * The fallback (Hadoop's default rule) against the decisions hedge.policy.baseline.HadoopDefault
 * makes on the same jobs (tests/data/hadoop_default_vectors.tsv, written by Python).
 */
class HadoopDefaultFallbackTest {
  /** Times in the vectors start at 0; an AM's clock is epoch ms (Hadoop's estimate needs > 0). */
  private static final long EPOCH = 1_700_000_000_000L;

  /**
   * Hadoop 2.7.3's LegacyTaskRuntimeEstimator and StartEndTimesBase on the vector's numbers (read
   * from their bytecode): run time (long) ((received - start) / max(1e-4, progress)) once a
   * report came after the launch, else -1; threshold (long) (mean + slowtaskthreshold x std),
   * population std, Long.MAX_VALUE until at least one task and 5% of the type's tasks completed;
   * a new attempt (long) mean.
   */
  private static final class LegacyFormulas implements TaskRuntimeEstimator {
    final Map<TaskAttemptId, long[]> times = new HashMap<>(); // start, received
    final Map<TaskAttemptId, Float> progress = new HashMap<>();
    final Map<TaskType, long[]> done = new HashMap<>();
    final Map<TaskType, Integer> total = new HashMap<>();
    float slowTaskThreshold;

    @Override public void enrollAttempt(TaskAttemptStatus status, long timestamp) {}
    @Override public void updateAttempt(TaskAttemptStatus status, long timestamp) {}
    @Override public void contextualize(Configuration conf, AppContext context) {}

    @Override public long attemptEnrolledTime(TaskAttemptId id) {
      long[] t = times.get(id);
      return t == null ? Long.MAX_VALUE : t[0];
    }

    @Override public long estimatedRuntime(TaskAttemptId id) {
      long[] t = times.get(id);
      if (t == null || !(t[0] > 0 && t[1] > t[0])) {
        return -1;
      }
      return (long) ((t[1] - t[0]) / Math.max(0.0001, progress.get(id)));
    }

    private double[] stats(TaskId id) {
      long[] runs = done.get(id.getTaskType());
      double sum = 0;
      double squares = 0;
      for (long r : runs) {
        sum += r;
        squares += (double) r * r;
      }
      double mean = sum / runs.length;
      double var = runs.length <= 1 ? 0 : Math.max(squares / runs.length - mean * mean, 0);
      return new double[] {mean, Math.sqrt(var)};
    }

    @Override public long thresholdRuntime(TaskId id) {
      int completed = done.get(id.getTaskType()).length;
      if (completed < 1 || (float) completed / total.get(id.getTaskType()) < 0.05f) {
        return Long.MAX_VALUE;
      }
      double[] s = stats(id);
      return (long) (s[0] + s[1] * slowTaskThreshold);
    }

    @Override public long estimatedNewAttemptRuntime(TaskId id) {
      return done.get(id.getTaskType()).length == 0 ? -1 : (long) stats(id)[0];
    }

    @Override public long runtimeEstimateVariance(TaskAttemptId id) {
      return -1;
    }
  }

  private static long[] longs(String field) {
    if (field.isEmpty()) {
      return new long[0];
    }
    String[] parts = field.split(",");
    long[] out = new long[parts.length];
    for (int i = 0; i < parts.length; i++) {
      out[i] = Long.parseLong(parts[i]);
    }
    return out;
  }

  private static float[] floats(String field) {
    String[] parts = field.isEmpty() ? new String[0] : field.split(",");
    float[] out = new float[parts.length];
    for (int i = 0; i < parts.length; i++) {
      out[i] = Float.parseFloat(parts[i]);
    }
    return out;
  }

  /** The map and the reduce (job task index, -1 none) the fallback copies on one vector. */
  private static int[] decide(String[] f) {
    JobId jobId = MRBuilderUtils.newJobId(ApplicationId.newInstance(1L, 1), 1);
    long now = EPOCH + Long.parseLong(f[0]);
    int nMaps = Integer.parseInt(f[5]);
    int nReduces = Integer.parseInt(f[6]);
    LegacyFormulas est = new LegacyFormulas();
    est.slowTaskThreshold = Float.parseFloat(f[1]);
    est.done.put(TaskType.MAP, longs(f[7]));
    est.done.put(TaskType.REDUCE, longs(f[8]));
    est.total.put(TaskType.MAP, nMaps);
    est.total.put(TaskType.REDUCE, nReduces);
    ActionLimits limits = new ActionLimits(true, true, Double.parseDouble(f[4]),
        Double.parseDouble(f[3]), Integer.parseInt(f[2]), true);
    JobTracker job = new JobTracker(jobId, EPOCH);
    long[] task = longs(f[9]);
    long[] running = longs(f[10]);
    long[] start = longs(f[11]);
    float[] progress = floats(f[12]);
    long[] received = longs(f[13]);
    int[] attempts = new int[nMaps + nReduces];
    Map<TaskId, Integer> index = new HashMap<>();
    // running attempts first: an attempt that starts takes up a copy pending for its task
    for (int i = 0; i < task.length; i++) {
      int t = (int) task[i];
      TaskId id = t < nMaps ? MRBuilderUtils.newTaskId(jobId, t, TaskType.MAP)
          : MRBuilderUtils.newTaskId(jobId, t - nMaps, TaskType.REDUCE);
      index.put(id, t);
      if (running[i] == 0) {
        continue;
      }
      TaskAttemptId a = MRBuilderUtils.newTaskAttemptId(id, attempts[t]++);
      job.started(a, EPOCH + start[i]);
      job.update(status(a, progress[i]), TaskAttemptState.RUNNING, EPOCH + received[i]);
      est.times.put(a, new long[] {EPOCH + start[i], EPOCH + received[i]});
      est.progress.put(a, progress[i]);
    }
    for (int i = 0; i < task.length; i++) {
      if (running[i] == 0) {
        int t = (int) task[i];
        TaskId id = t < nMaps ? MRBuilderUtils.newTaskId(jobId, t, TaskType.MAP)
            : MRBuilderUtils.newTaskId(jobId, t - nMaps, TaskType.REDUCE);
        job.containerNeed(id, 0); // makes the task known
        job.copyRequested(job.tasks.get(id)); // a copy waiting for its container
      }
    }
    int[] out = {-1, -1};
    for (JobTracker.Task t : HadoopDefaultFallback.choose(job, est, now, limits, nMaps,
        nReduces)) {
      out[t.isMap() ? 0 : 1] = index.get(t.id);
    }
    return out;
  }

  private static TaskAttemptStatus status(TaskAttemptId id, float progress) {
    TaskAttemptStatus s = new TaskAttemptStatus();
    s.id = id;
    s.progress = progress;
    return s;
  }

  @Test
  void matchesTheSharedVectors() throws IOException {
    int checked = 0;
    int copies = 0;
    for (String[] f : VectorFile.rows("hadoop_default_vectors.tsv", 16, true)) {
      String line = String.join("\t", f);
      int[] got = decide(f);
      assertEquals(Integer.parseInt(f[14]), got[0], "map: " + line);
      assertEquals(Integer.parseInt(f[15]), got[1], "reduce: " + line);
      copies += (got[0] >= 0 ? 1 : 0) + (got[1] >= 0 ? 1 : 0);
      checked++;
    }
    assertTrue(checked >= 300, "only " + checked + " vectors");
    assertTrue(copies >= 100, "only " + copies + " copies in the vectors");
  }
}
