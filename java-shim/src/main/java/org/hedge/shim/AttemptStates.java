package org.hedge.shim;

import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.job.Task;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;

/**
 * The state of an attempt that a status update is about.
 *
 * <p>When an attempt succeeds, the MRAppMaster hands the speculator the attempt's last reported
 * status, whose {@code taskState} still says RUNNING or COMMIT_PENDING (seen on Hadoop 3.4.1
 * in a real AM: no completed run time was ever recorded). Hadoop's own estimators therefore ask
 * the attempt itself ({@code StartEndTimesBase.updateAttempt}); so does hedge. The reported
 * state is used only when the AM does not know the attempt (harnesses, tests).
 */
final class AttemptStates {
  private AttemptStates() {}

  static TaskAttemptState of(AppContext context, TaskAttemptStatus status) {
    TaskAttemptState held = held(context, status.id);
    return held == null ? status.taskState : held;
  }

  private static TaskAttemptState held(AppContext context, TaskAttemptId id) {
    if (context == null) {
      return null;
    }
    try {
      Job job = context.getJob(id.getTaskId().getJobId());
      Task task = job == null ? null : job.getTask(id.getTaskId());
      TaskAttempt attempt = task == null ? null : task.getAttempt(id);
      return attempt == null ? null : attempt.getState();
    } catch (RuntimeException e) {
      return null;
    }
  }
}
