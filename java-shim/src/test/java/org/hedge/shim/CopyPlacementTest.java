package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptKillEvent;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.junit.jupiter.api.Test;

/** A copy moves off the NodeManager of another live attempt of its task, a bounded number of times. */
class CopyPlacementTest {
  private static final JobId JOB = MRBuilderUtils.newJobId(ApplicationId.newInstance(1, 1), 1);
  private static final TaskId MAP0 = MRBuilderUtils.newTaskId(JOB, 0, TaskType.MAP);
  private static final TaskId MAP1 = MRBuilderUtils.newTaskId(JOB, 1, TaskType.MAP);
  private static final NodeId NM1 = NodeId.newInstance("host1", 45454);
  private static final NodeId NM2 = NodeId.newInstance("host2", 45454);
  // a second NodeManager on host1 (a pseudo-distributed cluster): another NodeManager
  private static final NodeId NM1B = NodeId.newInstance("host1", 45455);

  @Test
  void aCopyOnItsOriginalsNodeManagerMovesAtMostMaxMovesTimes() {
    CopyPlacement placement = new CopyPlacement(true, 2);
    List<NodeId> original = Collections.singletonList(NM1);
    assertTrue(placement.shouldMove(MAP0, NM1, original));
    assertTrue(placement.shouldMove(MAP0, NM1, original));
    assertFalse(placement.shouldMove(MAP0, NM1, original), "third time: left there");
    assertEquals(2, placement.moves(MAP0));
    assertTrue(placement.shouldMove(MAP1, NM1, original), "moves are counted per task");
    assertEquals("copies moved off their original's NodeManager 3, left there after 2 moves 1",
        placement.summary());
  }

  @Test
  void aCopyElsewhereOrWithoutANodeStays() {
    CopyPlacement placement = new CopyPlacement(true, 2);
    assertFalse(placement.shouldMove(MAP0, NM2, Collections.singletonList(NM1)));
    assertFalse(placement.shouldMove(MAP0, NM1B, Collections.singletonList(NM1)));
    assertFalse(placement.shouldMove(MAP0, null, Collections.singletonList(NM1)));
    assertFalse(placement.shouldMove(MAP0, NM1, Collections.<NodeId>emptyList()));
    assertEquals(0, placement.moves(MAP0));
  }

  @Test
  void offNothingMoves() {
    Configuration conf = new Configuration(false);
    conf.setBoolean(HedgeConf.PLACEMENT_MOVE, false);
    CopyPlacement placement = new CopyPlacement(conf);
    assertFalse(placement.enabled());
    assertFalse(placement.shouldMove(MAP0, NM1, Collections.singletonList(NM1)));
    assertTrue(placement.summary().endsWith("(off)"));
    assertEquals("copies beside their original not moved (hedge.placement.move off)",
        placement.settings());
    assertFalse(new CopyPlacement(new Configuration(false)).enabled(), "off by default");
    conf.setBoolean(HedgeConf.PLACEMENT_MOVE, true);
    assertTrue(new CopyPlacement(conf).enabled());
    assertEquals("copies beside their original moved, at most 2 times a task",
        new CopyPlacement(conf).settings());
  }

  @Test
  void othersAreTheUnfinishedAttemptsWithANodeButTheCopy() {
    TaskAttemptId original = MRBuilderUtils.newTaskAttemptId(MAP0, 0);
    TaskAttemptId failed = MRBuilderUtils.newTaskAttemptId(MAP0, 1);
    TaskAttemptId waiting = MRBuilderUtils.newTaskAttemptId(MAP0, 2);
    TaskAttemptId copy = MRBuilderUtils.newTaskAttemptId(MAP0, 3);
    List<TaskAttempt> attempts = Arrays.asList(attempt(original, NM1, false),
        attempt(failed, NM2, true), attempt(waiting, null, false), attempt(copy, NM1, false));
    assertEquals(Collections.singletonList(NM1), CopyPlacement.othersNodes(attempts, copy));
  }

  @Test
  void theKillAsksTheAmToRescheduleTheTask() {
    TaskAttemptId copy = MRBuilderUtils.newTaskAttemptId(MAP0, 1);
    TaskAttemptKillEvent kill = CopyPlacement.reschedulingKill(copy, "why");
    assertTrue(kill.getRescheduleAttempt());
    assertEquals(copy, kill.getTaskAttemptID());
  }

  /**
   * A TaskAttempt answering only its id, node and whether it finished: othersNodes must read
   * nothing else, and any other call fails the test, naming the method.
   */
  private static TaskAttempt attempt(TaskAttemptId id, NodeId node, boolean finished) {
    return (TaskAttempt) Proxy.newProxyInstance(TaskAttempt.class.getClassLoader(),
        new Class<?>[] {TaskAttempt.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "getID":
              return id;
            case "getNodeId":
              return node;
            case "isFinished":
              return finished;
            default:
              throw new AssertionError("othersNodes read TaskAttempt." + method.getName()
                  + ", which the fake does not answer");
          }
        });
  }
}
