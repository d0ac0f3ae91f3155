package org.hedge.shim;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.app.speculate.TaskRuntimeEstimator;

/**
 * What the shim does when the control plane cannot answer: Hadoop's default speculation rule,
 * re-implemented on the same runtime estimator (hedge.policy.baseline.HadoopDefault is the same
 * rule in Python; tests/data/hadoop_default_vectors.tsv holds the two equal). For each task type,
 * among tasks with exactly one running attempt and no copy pending, a task is a candidate when
 * its attempt's estimated run time exceeds the estimator's threshold (mean + slowtaskthreshold
 * x std of completed run times; hedge's test: Hadoop's DefaultSpeculator only checks that the
 * threshold exists) and a new attempt started now would finish earlier; the candidate with the
 * largest gain (estimated end - replacement end) gets one copy. At most one copy per type per
 * scan, and none while the type already runs DefaultSpeculator's cap of copies,
 * (int) max(minimum-allowed, cap-total x its tasks, cap-running x its running tasks).
 */
final class HadoopDefaultFallback {
  private HadoopDefaultFallback() {}

  /** Tasks to copy now (at most one map and one reduce); nMaps, nReduces: the job's tasks. */
  static List<JobTracker.Task> choose(JobTracker job, TaskRuntimeEstimator estimator, long now,
      ActionLimits limits, int nMaps, int nReduces) {
    List<JobTracker.Task> out = new ArrayList<>();
    JobTracker.Task bestMap = null;
    JobTracker.Task bestReduce = null;
    long gainMap = 0;
    long gainReduce = 0;
    Set<JobTracker.Task> runningMaps = new HashSet<>();
    Set<JobTracker.Task> runningReduces = new HashSet<>();
    synchronized (job) {
      for (JobTracker.Attempt a : job.live.values()) {
        JobTracker.Task t = a.task;
        boolean map = t.isMap();
        (map ? runningMaps : runningReduces).add(t);
        if (t.done || t.running() != 1 || t.pendingCopies > 0
            || !limits.speculates(map)) {
          continue;
        }
        long gain = gain(a.id, t, estimator, now);
        if (map && gain > gainMap) {
          gainMap = gain;
          bestMap = t;
        } else if (!map && gain > gainReduce) {
          gainReduce = gain;
          bestReduce = t;
        }
      }
    }
    if (bestMap != null && underCap(limits, nMaps, runningMaps)) {
      out.add(bestMap);
    }
    if (bestReduce != null && underCap(limits, nReduces, runningReduces)) {
      out.add(bestReduce);
    }
    return out;
  }

  /** True while the type's tasks with a copy running or pending stay below Hadoop's cap. */
  private static boolean underCap(ActionLimits limits, int nType, Set<JobTracker.Task> running) {
    int speculating = 0;
    for (JobTracker.Task t : running) {
      if (t.running() + t.pendingCopies > 1) {
        speculating++;
      }
    }
    return limits.allowed(nType, running.size()) > speculating;
  }

  /** Milliseconds a copy started now would save; 0 when it would not (or nothing is known). */
  static long gain(TaskAttemptId id, JobTracker.Task t, TaskRuntimeEstimator estimator,
      long now) {
    long runtime = estimator.estimatedRuntime(id);
    long start = estimator.attemptEnrolledTime(id);
    if (runtime < 0 || start == Long.MAX_VALUE) {
      return 0;
    }
    if (runtime <= estimator.thresholdRuntime(t.id)) {
      return 0;
    }
    long replacement = estimator.estimatedNewAttemptRuntime(t.id);
    if (replacement < 0) {
      return 0;
    }
    long end = start + runtime;
    long replacementEnd = now + replacement;
    return end >= now && end > replacementEnd ? end - replacementEnd : 0;
  }
}
