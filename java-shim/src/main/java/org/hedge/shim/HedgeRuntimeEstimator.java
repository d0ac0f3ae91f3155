package org.hedge.shim;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.app.speculate.TaskRuntimeEstimator;
import org.apache.hadoop.yarn.util.Clock;
import org.apache.hadoop.yarn.util.SystemClock;

/**
 * JVM-start-aware runtime estimator (Chronos eq. 32; hedge.estimate.jvm_ect), usable with
 * Hadoop's own DefaultSpeculator as yarn.app.mapreduce.am.job.task.estimator.class.
 *
 * <p>An attempt does no work until its JVM is up, so its processing rate is measured from its
 * first progress report (time t_fp, progress p_fp), not from its launch:
 * rate = (p - p_fp) / (t - t_fp) and ECT = t + (1 - p) / rate, with p the last reported progress
 * and t the time it arrived (as of the report, like Hadoop's own estimators and like
 * hedge.estimate.runtime.jvm_arrays: pairing a stale p with the current time would inflate the
 * estimate by the report's age; tests/data/runtime_estimate_vectors.tsv holds the two equal). The
 * estimated run time is ECT - launch. A new attempt is expected to
 * take the mean run time of the job's completed attempts of that type; before any completed,
 * the mean start-up delay (t_fp - launch) of running attempts plus their median processing time
 * (1 - p_fp) / rate. The threshold is Hadoop's: mean + slowtaskthreshold x standard deviation
 * of completed run times (Long.MAX_VALUE before the first completion).
 */
public class HedgeRuntimeEstimator implements TaskRuntimeEstimator {
  /** Per-attempt observations (times in ms on the AM clock). */
  private static final class Observed {
    volatile long start = Long.MAX_VALUE;
    volatile long firstProgressTime = -1;
    volatile float firstProgress;
    volatile float progress;
    volatile long lastReport = -1;
    volatile boolean finished;
  }

  /** Running mean/variance (Welford) of completed run times, one per job and task type. */
  private static final class Stats {
    long n;
    double mean;
    double m2;

    synchronized void add(double x) {
      n++;
      double d = x - mean;
      mean += d / n;
      m2 += d * (x - mean);
    }

    synchronized double std() {
      return n > 1 ? Math.sqrt(m2 / (n - 1)) : 0.0;
    }
  }

  private final ConcurrentMap<TaskAttemptId, Observed> attempts = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Stats> completed = new ConcurrentHashMap<>();
  private volatile Clock clock = new SystemClock();
  private volatile float slowTaskThreshold = 1.0f;
  private volatile AppContext context; // the AM, asked for attempts' states (null in tests)

  @Override
  public void contextualize(Configuration conf, AppContext context) {
    slowTaskThreshold = conf.getFloat(MRJobConfig.SPECULATIVE_SLOWTASK_THRESHOLD, 1.0f);
    this.context = context;
    if (context != null && context.getClock() != null) {
      clock = context.getClock();
    }
  }

  /** For harnesses and tests that drive time themselves. */
  public void setClock(Clock clock) {
    this.clock = clock;
  }

  private Observed observed(TaskAttemptId id) {
    Observed o = attempts.get(id);
    if (o == null) {
      Observed fresh = new Observed();
      o = attempts.putIfAbsent(id, fresh);
      if (o == null) {
        o = fresh;
      }
    }
    return o;
  }

  private static String key(JobId job, TaskType type) {
    return job + "/" + type;
  }

  @Override
  public void enrollAttempt(TaskAttemptStatus status, long timestamp) {
    Observed o = observed(status.id);
    if (o.start == Long.MAX_VALUE) {
      o.start = timestamp;
    }
  }

  @Override
  public long attemptEnrolledTime(TaskAttemptId id) {
    Observed o = attempts.get(id);
    return o == null ? Long.MAX_VALUE : o.start;
  }

  @Override
  public void updateAttempt(TaskAttemptStatus status, long timestamp) {
    Observed o = observed(status.id);
    if (o.start == Long.MAX_VALUE) {
      o.start = timestamp;
    }
    float p = Math.max(0f, Math.min(1f, status.progress));
    if (timestamp >= o.lastReport) {
      o.progress = Math.max(o.progress, p);
      o.lastReport = timestamp;
      if (o.firstProgressTime < 0 && p > 0) {
        o.firstProgressTime = timestamp;
        o.firstProgress = p;
      }
    }
    if (!o.finished && AttemptStates.of(context, status) == TaskAttemptState.SUCCEEDED) {
      o.finished = true;
      TaskId task = status.id.getTaskId();
      stats(task.getJobId(), task.getTaskType()).add(timestamp - o.start);
    }
  }

  private Stats stats(JobId job, TaskType type) {
    String k = key(job, type);
    Stats s = completed.get(k);
    if (s == null) {
      Stats fresh = new Stats();
      s = completed.putIfAbsent(k, fresh);
      if (s == null) {
        s = fresh;
      }
    }
    return s;
  }

  /** Estimated completion time (ms) of an attempt as of its last report; -1 when unknown yet. */
  long estimatedCompletion(Observed o) {
    if (o.start == Long.MAX_VALUE) {
      return -1;
    }
    if (o.finished || o.progress >= 1f) {
      return o.lastReport;
    }
    double gained = (double) o.progress - o.firstProgress; // in double, as Python computes it
    if (o.firstProgressTime < 0 || gained <= 0) {
      return -1;
    }
    double elapsed = o.lastReport - o.firstProgressTime;
    return o.lastReport + Math.round((1.0 - o.progress) * elapsed / gained);
  }

  @Override
  public long estimatedRuntime(TaskAttemptId id) {
    Observed o = attempts.get(id);
    if (o == null) {
      return -1;
    }
    long ect = estimatedCompletion(o);
    return ect < 0 ? -1 : ect - o.start;
  }

  @Override
  public long estimatedNewAttemptRuntime(TaskId id) {
    Stats s = completed.get(key(id.getJobId(), id.getTaskType()));
    if (s != null && s.n > 0) {
      return Math.round(s.mean);
    }
    // No completion yet: mean start-up delay plus the median full processing time.
    double startupSum = 0;
    int startups = 0;
    java.util.List<Double> processing = new java.util.ArrayList<>();
    for (java.util.Map.Entry<TaskAttemptId, Observed> e : attempts.entrySet()) {
      TaskId t = e.getKey().getTaskId();
      if (!t.getJobId().equals(id.getJobId()) || t.getTaskType() != id.getTaskType()) {
        continue;
      }
      Observed o = e.getValue();
      if (o.firstProgressTime < 0 || o.start == Long.MAX_VALUE) {
        continue;
      }
      startupSum += o.firstProgressTime - o.start;
      startups++;
      double gained = (double) o.progress - o.firstProgress;
      if (gained > 0 && o.lastReport > o.firstProgressTime) {
        processing.add((1.0 - o.firstProgress) * (o.lastReport - o.firstProgressTime) / gained);
      }
    }
    if (processing.isEmpty()) {
      return -1;
    }
    java.util.Collections.sort(processing);
    return Math.round(startupSum / startups + processing.get(processing.size() / 2));
  }

  @Override
  public long thresholdRuntime(TaskId id) {
    Stats s = completed.get(key(id.getJobId(), id.getTaskType()));
    if (s == null || s.n == 0) {
      return Long.MAX_VALUE;
    }
    return Math.round(s.mean + slowTaskThreshold * s.std());
  }

  @Override
  public long runtimeEstimateVariance(TaskAttemptId id) {
    TaskId t = id.getTaskId();
    Stats s = completed.get(key(t.getJobId(), t.getTaskType()));
    if (s == null || s.n < 2) {
      return -1;
    }
    double std = s.std();
    return Math.round(std * std);
  }
}
