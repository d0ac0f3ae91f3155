package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.junit.jupiter.api.Test;

class JobTrackerTest {
  private final JobId job = MRBuilderUtils.newJobId(ApplicationId.newInstance(1L, 1), 1);
  private final JobTracker tracker = new JobTracker(job, 10_000);
  private TaskAttemptState reducerState = TaskAttemptState.RUNNING;
  private final JobTracker.NodeResolver context = new JobTracker.NodeResolver() {
    @Override
    public String host(TaskAttemptId id) {
      return id.getTaskId().getTaskType() == TaskType.MAP ? "m1" : "r1";
    }

    @Override
    public TaskAttemptState state(TaskAttemptId id) {
      return id.getTaskId().getTaskType() == TaskType.MAP ? TaskAttemptState.RUNNING
          : reducerState;
    }
  };

  private TaskAttemptId attempt(TaskType type, int task, int n) {
    return MRBuilderUtils.newTaskAttemptId(MRBuilderUtils.newTaskId(job, task, type), n);
  }

  private void report(TaskAttemptId id, long ms, float p, TaskAttemptState state) {
    TaskAttemptStatus s = new TaskAttemptStatus();
    s.id = id;
    s.progress = p;
    s.taskState = state;
    tracker.update(s, state, ms);
  }

  @Test
  void aReportNewerThanTheScanClockMovesTheScanTimeNotBack() {
    TaskAttemptId m0 = attempt(TaskType.MAP, 0, 0);
    tracker.started(m0, 11_000);
    report(m0, 15_250, 0.5f, TaskAttemptState.RUNNING); // arrived after the clock read
    Scan scan = tracker.snapshot(15_000, 1, 0, context);
    assertEquals(15_250, scan.nowMs);
    assertEquals(5_250, scan.report[0]);
    assertEquals(16_000, tracker.snapshot(16_000, 1, 0, context).nowMs);
  }

  @Test
  void fullSnapshotThenDeltasThenResync() {
    TaskAttemptId m0 = attempt(TaskType.MAP, 0, 0);
    TaskAttemptId m1 = attempt(TaskType.MAP, 1, 0);
    TaskAttemptId r0 = attempt(TaskType.REDUCE, 0, 0);
    tracker.started(m0, 11_000);
    tracker.started(m1, 11_000);
    tracker.started(r0, 12_000);
    report(m0, 14_000, 0.25f, TaskAttemptState.RUNNING);
    Scan full = tracker.snapshot(15_000, 2, 1, context);
    assertFalse(full.delta);
    assertEquals(3, full.rows);
    assertArrayEquals(new int[] {0, 1, 2}, java.util.Arrays.copyOf(full.task, 3));
    assertEquals(1000, full.start[0]); // ms after the job start
    assertEquals(4000, full.firstProgressTime[0]);
    assertEquals(WireFormat.MISSING, full.firstProgressTime[1]);
    assertEquals("m1\nr1", new String(full.newNodeNames, java.nio.charset.StandardCharsets.UTF_8));
    tracker.nodesAcknowledged(full);

    // m1 progresses, m0 succeeds: the delta holds m1 only, m0's key is removed, 1 run time
    report(m1, 16_000, 0.5f, TaskAttemptState.RUNNING);
    report(m0, 17_000, 1f, TaskAttemptState.SUCCEEDED);
    Scan delta = tracker.snapshot(18_000, 2, 1, context);
    assertTrue(delta.delta);
    assertEquals(1, delta.rows);
    assertEquals(1, delta.task[0]);
    assertArrayEquals(new int[] {0}, delta.removed);
    assertArrayEquals(new byte[] {JobTracker.SUCCEEDED}, delta.removedState);
    assertArrayEquals(new int[] {1000}, delta.removedStart); // ms after the job start
    assertArrayEquals(new int[] {7000}, delta.removedEnd);
    assertArrayEquals(new int[] {0}, delta.removedTask);
    assertArrayEquals(new int[] {0}, delta.removedNode); // m1, looked up while it ran
    assertArrayEquals(new double[] {Double.NaN}, delta.removedInputBytes); // unknown to the AM
    assertArrayEquals(new float[] {6f}, delta.doneMapRuntimes);
    assertEquals(0, delta.newNodeNames.length);
    assertEquals(2, delta.nodeBase);

    // nothing new: an empty delta (m0 is not sent again); then the reducer dies silently
    // (Hadoop sends no event)
    Scan empty = tracker.snapshot(19_000, 2, 1, context);
    assertEquals(0, empty.rows);
    assertEquals(0, empty.removed.length);
    reducerState = TaskAttemptState.FAILED;
    Scan later = tracker.snapshot(19_000 + JobTracker.STALE_MS, 2, 1, context);
    assertArrayEquals(new int[] {2}, later.removed);
    assertArrayEquals(new byte[] {JobTracker.FAILED}, later.removedState);
    assertArrayEquals(new int[] {2000}, later.removedEnd); // no event: its last sign of life
    assertArrayEquals(new int[] {2}, later.removedTask); // reduce 0 of a 2-map job
    assertArrayEquals(new int[] {1}, later.removedNode); // r1

    // after a failed scan everything is sent again, every attempt ended so far included
    tracker.resync();
    Scan again = tracker.snapshot(30_000, 2, 1, context);
    assertFalse(again.delta);
    assertEquals(1, again.rows);
    assertArrayEquals(new float[] {6f}, again.doneMapRuntimes);
    assertArrayEquals(new int[] {0, 2}, again.removed);
    assertArrayEquals(new int[] {0, 2}, again.removedTask);
    assertArrayEquals(new int[] {0, 1}, again.removedNode);
    assertArrayEquals(new int[] {1000, 2000}, again.removedStart);
    assertArrayEquals(new int[] {7000, 2000}, again.removedEnd);
    assertArrayEquals(new byte[] {JobTracker.SUCCEEDED, JobTracker.FAILED}, again.removedState);
    assertArrayEquals(new byte[] {0, 0}, again.removedSpeculative);
    assertArrayEquals(new double[] {Double.NaN, Double.NaN}, again.removedInputBytes);

    // the delta after it carries only what ended since
    report(m1, 31_000, 0.5f, TaskAttemptState.KILLED);
    Scan next = tracker.snapshot(32_000, 2, 1, context);
    assertTrue(next.delta);
    assertArrayEquals(new int[] {1}, next.removed);
    assertArrayEquals(new int[] {1}, next.removedTask);
    assertArrayEquals(new byte[] {JobTracker.KILLED}, next.removedState);
    assertEquals(0, tracker.snapshot(33_000, 2, 1, context).removed.length);
  }

  /**
   * An attempt that starts and ends between two scans was never looked up: the next scan
   * resolves its node (once) and names the host in the same frame.
   */
  @Test
  void anAttemptStartedAndEndedBetweenScansIsSentWithItsNode() {
    final java.util.List<TaskAttemptId> asked = new java.util.ArrayList<>();
    JobTracker.NodeResolver counting = new JobTracker.NodeResolver() {
      @Override
      public String host(TaskAttemptId id) {
        asked.add(id);
        return context.host(id);
      }

      @Override
      public TaskAttemptState state(TaskAttemptId id) {
        return context.state(id);
      }
    };
    tracker.started(attempt(TaskType.MAP, 0, 0), 11_000);
    Scan full = tracker.snapshot(12_000, 1, 2, counting);
    assertEquals("m1", new String(full.newNodeNames, java.nio.charset.StandardCharsets.UTF_8));
    tracker.nodesAcknowledged(full);

    TaskAttemptId r1 = attempt(TaskType.REDUCE, 1, 0);
    tracker.started(r1, 13_000);
    report(r1, 14_000, 0.1f, TaskAttemptState.FAILED);
    asked.clear();
    Scan delta = tracker.snapshot(15_000, 1, 2, counting);
    assertEquals(0, delta.rows);
    assertArrayEquals(new int[] {1}, delta.removed);
    assertArrayEquals(new int[] {2}, delta.removedTask); // 1 map + reduce 1
    assertArrayEquals(new int[] {1}, delta.removedNode);
    assertEquals(1, delta.nodeBase);
    assertEquals("r1", new String(delta.newNodeNames, java.nio.charset.StandardCharsets.UTF_8));
    assertArrayEquals(new double[] {Double.NaN}, delta.removedInputBytes);
    assertEquals(java.util.Collections.singletonList(r1), asked);
    tracker.nodesAcknowledged(delta);

    // resolved once, kept: a full snapshot carries the node without asking again
    tracker.resync();
    asked.clear();
    Scan again = tracker.snapshot(16_000, 1, 2, counting);
    assertArrayEquals(new int[] {1}, again.removed);
    assertArrayEquals(new int[] {1}, again.removedNode);
    assertEquals(0, again.newNodeNames.length);
    assertTrue(asked.isEmpty());

    // no resolver: the node is unknown
    TaskAttemptId r0 = attempt(TaskType.REDUCE, 0, 0);
    tracker.started(r0, 17_000);
    report(r0, 18_000, 0.1f, TaskAttemptState.KILLED);
    Scan blind = tracker.snapshot(19_000, 1, 2, null);
    assertArrayEquals(new int[] {2}, blind.removed);
    assertArrayEquals(new int[] {1}, blind.removedTask);
    assertArrayEquals(new int[] {-1}, blind.removedNode);
  }

  /** A scan clears what it sent: the next change of the same attempt is in the next delta. */
  @Test
  void anAttemptSentInAScanIsSentAgainWhenItChangesAgain() {
    TaskAttemptId m0 = attempt(TaskType.MAP, 0, 0);
    TaskAttemptId m1 = attempt(TaskType.MAP, 1, 0);
    tracker.started(m0, 11_000);
    tracker.started(m1, 11_000);
    assertEquals(2, tracker.snapshot(12_000, 2, 0, context).rows); // full, both dirty
    report(m0, 13_000, 0.25f, TaskAttemptState.RUNNING);
    Scan first = tracker.snapshot(14_000, 2, 0, context);
    assertEquals(1, first.rows);
    assertEquals(0, first.task[0]);
    report(m0, 15_000, 0.5f, TaskAttemptState.RUNNING);
    report(m1, 15_000, 0.25f, TaskAttemptState.RUNNING);
    Scan second = tracker.snapshot(16_000, 2, 0, context);
    assertEquals(2, second.rows);
    assertArrayEquals(new float[] {0.5f, 0.25f}, java.util.Arrays.copyOf(second.progress, 2));
    assertEquals(0, tracker.snapshot(17_000, 2, 0, context).rows);
  }

  @Test
  void copiesAreMarkedSpeculativeAndCounted() {
    TaskAttemptId first = attempt(TaskType.MAP, 0, 0);
    tracker.started(first, 11_000);
    JobTracker.Task task = tracker.tasks.values().iterator().next();
    tracker.copyRequested(task);
    assertEquals(1, tracker.speculating());
    tracker.started(attempt(TaskType.MAP, 0, 1), 12_000);
    assertEquals(1, tracker.speculating()); // pending copy became a running speculative one
    Scan s = tracker.snapshot(13_000, 1, 0, context);
    assertEquals(0, s.speculative[0]);
    assertEquals(1, s.speculative[1]);
    assertEquals(1, tracker.runningTasks());
  }

  @Test
  void silentAttemptsAreFoundWhileOthersKeepReportingAndSuccessEndsEveryAttempt() {
    TaskAttemptId[] maps = new TaskAttemptId[4];
    for (int i = 0; i < maps.length; i++) {
      maps[i] = attempt(TaskType.MAP, i, 0);
      tracker.started(maps[i], 11_000);
    }
    TaskAttemptId copy = attempt(TaskType.MAP, 3, 1);
    tracker.started(copy, 12_000);
    final java.util.Set<TaskAttemptId> failed = new java.util.HashSet<>();
    JobTracker.NodeResolver hadoop = new JobTracker.NodeResolver() {
      @Override
      public String host(TaskAttemptId id) {
        return "h";
      }

      @Override
      public TaskAttemptState state(TaskAttemptId id) {
        return failed.contains(id) ? TaskAttemptState.FAILED : TaskAttemptState.RUNNING;
      }
    };
    tracker.snapshot(12_500, 4, 0, hadoop);
    // maps 0, 2 and the copy report every 3 s; map 1 (started first) and map 3 fall silent
    for (long t = 14_000; t <= 26_000; t += 3000) {
      for (TaskAttemptId id : new TaskAttemptId[] {maps[0], maps[2], copy}) {
        report(id, t, (t - 11_000) / 60_000f, TaskAttemptState.RUNNING);
      }
    }
    failed.add(maps[1]);
    Scan s = tracker.snapshot(26_500, 4, 0, hadoop);
    assertArrayEquals(new int[] {1}, s.removed); // map 1 failed; silent map 3 still runs
    assertEquals(4, tracker.live.size());
    // the copy succeeds: task 3's original attempt ends with it (keys 3 and 4)
    report(copy, 27_000, 1f, TaskAttemptState.SUCCEEDED);
    Scan after = tracker.snapshot(27_500, 4, 0, hadoop);
    assertArrayEquals(new int[] {3, 4}, after.removed); // the original, then the copy
    // the original is killed when its copy wins, at the copy's success (17 s after the start)
    assertArrayEquals(new byte[] {JobTracker.KILLED, JobTracker.SUCCEEDED}, after.removedState);
    assertArrayEquals(new byte[] {0, 1}, after.removedSpeculative);
    assertArrayEquals(new int[] {17_000, 17_000}, after.removedEnd);
    assertArrayEquals(new int[] {1000, 2000}, after.removedStart);
    assertEquals(2, tracker.live.size());
    failed.add(maps[0]); // heard from recently: not looked up, not dropped
    assertEquals(0, tracker.snapshot(28_000, 4, 0, hadoop).removed.length);
  }

  /**
   * The cap counts are kept as events arrive (not walked per scan): after every event of a
   * random run of starts, copies, reports, failures, kills, successes and stale checks they
   * equal a walk over the live attempts and the tasks, as computed before.
   */
  @Test
  void capCountsKeptByEventsEqualAWalk() {
    java.util.Random rng = new java.util.Random(7);
    final java.util.Set<TaskAttemptId> gone = new java.util.HashSet<>();
    JobTracker.NodeResolver hadoop = new JobTracker.NodeResolver() {
      @Override
      public String host(TaskAttemptId id) {
        return "h";
      }

      @Override
      public TaskAttemptState state(TaskAttemptId id) {
        return gone.contains(id) ? TaskAttemptState.KILLED : TaskAttemptState.RUNNING;
      }
    };
    int[] next = new int[12];
    long ms = 11_000;
    for (int step = 0; step < 3000; step++) {
      ms += rng.nextInt(400);
      int task = rng.nextInt(next.length);
      TaskType type = task < 8 ? TaskType.MAP : TaskType.REDUCE;
      TaskAttemptId id = attempt(type, task % 8, rng.nextInt(next[task] + 1));
      JobTracker.Task t = tracker.tasks.get(id.getTaskId());
      switch (rng.nextInt(7)) {
        case 0:
          tracker.started(attempt(type, task % 8, next[task]++), ms);
          break;
        case 1:
          if (t != null) {
            tracker.copyRequested(t);
          }
          break;
        case 2:
          report(id, ms, rng.nextFloat(), TaskAttemptState.RUNNING);
          break;
        case 3:
          report(id, ms, 0.5f, rng.nextBoolean() ? TaskAttemptState.FAILED
              : TaskAttemptState.KILLED);
          break;
        case 4:
          JobTracker.Attempt a = tracker.live.get(id);
          if (a != null) {
            tracker.killed(a, ms);
          }
          break;
        case 5:
          if (rng.nextInt(20) == 0) {
            report(id, ms, 1f, TaskAttemptState.SUCCEEDED);
          }
          break;
        default:
          gone.add(id); // Hadoop ended it without an event: a stale check finds it
          tracker.snapshot(ms + JobTracker.STALE_MS + 1, 8, 4, hadoop);
          break;
      }
      int speculating = 0;
      int running = 0;
      for (JobTracker.Attempt live : tracker.live.values()) {
        speculating += live.speculative ? 1 : 0;
      }
      for (JobTracker.Task each : tracker.tasks.values()) {
        speculating += each.pendingCopies;
        running += each.running() > 0 && !each.done ? 1 : 0;
      }
      assertEquals(speculating, tracker.speculating(), "speculating after step " + step);
      assertEquals(running, tracker.runningTasks(), "running tasks after step " + step);
    }
  }
}
