package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.junit.jupiter.api.Test;

class HedgeRuntimeEstimatorTest {
  private final JobId job = MRBuilderUtils.newJobId(ApplicationId.newInstance(1L, 1), 1);
  private long now;
  private final HedgeRuntimeEstimator est = new HedgeRuntimeEstimator();

  HedgeRuntimeEstimatorTest() {
    est.contextualize(new Configuration(false), null);
    est.setClock(() -> now);
  }

  private TaskAttemptId attempt(int task) {
    TaskId t = MRBuilderUtils.newTaskId(job, task, TaskType.MAP);
    return MRBuilderUtils.newTaskAttemptId(t, 0);
  }

  private void report(TaskAttemptId id, long at, float progress, TaskAttemptState state) {
    TaskAttemptStatus s = new TaskAttemptStatus();
    s.id = id;
    s.progress = progress;
    s.taskState = state;
    est.updateAttempt(s, at);
  }

  private void start(TaskAttemptId id, long at) {
    TaskAttemptStatus s = new TaskAttemptStatus();
    s.id = id;
    est.enrollAttempt(s, at);
  }

  @Test
  void rateIsMeasuredFromTheFirstProgressReport() {
    TaskAttemptId a = attempt(0);
    start(a, 0);
    report(a, 5000, 0.1f, TaskAttemptState.RUNNING); // JVM up after ~5 s
    report(a, 15000, 0.5f, TaskAttemptState.RUNNING);
    now = 15000;
    // rate = 0.4 / 10 s; ECT = 15 s + 0.5 / 0.04 = 27.5 s after launch
    assertEquals(27500, est.estimatedRuntime(a), 1);
    now = 20000; // no new report: the estimate stays as of the last report (was 38750, the
    // stale progress paired with the current time; hedge.estimate.jvm_arrays never did that)
    assertEquals(27500, est.estimatedRuntime(a), 1);
    assertEquals(0, est.attemptEnrolledTime(a));
    assertEquals(-1, est.estimatedRuntime(attempt(9)));
  }

  @Test
  void newAttemptsAndThresholdFollowCompletedRunTimes() {
    TaskId t = attempt(0).getTaskId();
    assertEquals(Long.MAX_VALUE, est.thresholdRuntime(t));
    TaskAttemptId a = attempt(1);
    TaskAttemptId b = attempt(2);
    start(a, 0);
    start(b, 0);
    // before any completion: mean start-up (2 s) + median processing time ((1-0.1)/rate)
    report(a, 2000, 0.1f, TaskAttemptState.RUNNING);
    report(a, 11000, 0.55f, TaskAttemptState.RUNNING); // rate 0.05/s -> 18 s of processing
    report(b, 2000, 0.1f, TaskAttemptState.RUNNING);
    report(b, 11000, 0.55f, TaskAttemptState.RUNNING);
    now = 11000;
    assertEquals(20000, est.estimatedNewAttemptRuntime(t), 1);
    report(a, 20000, 1f, TaskAttemptState.SUCCEEDED);
    report(b, 30000, 1f, TaskAttemptState.SUCCEEDED);
    assertEquals(25000, est.estimatedNewAttemptRuntime(t));
    // mean 25 s + 1.0 x sample std (7.071 s)
    assertEquals(32071, est.thresholdRuntime(t));
    assertEquals(50_000_000, est.runtimeEstimateVariance(a));
  }

  /** The estimate against jvm_arrays (tests/data/runtime_estimate_vectors.tsv, by Python). */
  @Test
  void matchesTheSharedVectors() throws IOException {
    int checked = 0;
    int estimated = 0;
    for (String[] f : VectorFile.rows("runtime_estimate_vectors.tsv", 5, true)) {
      String line = String.join("\t", f);
      HedgeRuntimeEstimator fresh = new HedgeRuntimeEstimator();
      fresh.contextualize(new Configuration(false), null);
      long scan = Long.parseLong(f[3]);
      fresh.setClock(() -> scan);
      TaskAttemptId a = attempt(checked);
      TaskAttemptStatus started = new TaskAttemptStatus();
      started.id = a;
      fresh.enrollAttempt(started, Long.parseLong(f[0]));
      String[] times = f[1].isEmpty() ? new String[0] : f[1].split(",");
      String[] progress = f[2].isEmpty() ? new String[0] : f[2].split(",");
      for (int i = 0; i < times.length; i++) {
        TaskAttemptStatus s = new TaskAttemptStatus();
        s.id = a;
        s.progress = Float.parseFloat(progress[i]);
        s.taskState = TaskAttemptState.RUNNING;
        fresh.updateAttempt(s, Long.parseLong(times[i]));
      }
      long got = fresh.estimatedRuntime(a);
      if (f[4].equals("nan")) {
        assertEquals(-1, got, "no estimate yet: " + line);
      } else {
        assertEquals(Double.parseDouble(f[4]), got, 1.0, "estimate: " + line);
        estimated++;
      }
      checked++;
    }
    assertTrue(checked >= 300 && estimated >= 150, checked + " vectors, " + estimated
        + " with an estimate");
  }
}
