package org.hedge.shim;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptKillEvent;
import org.apache.hadoop.yarn.api.records.NodeId;

/**
 * Moves a copy off its original's NodeManager.
 *
 * <p>A stock MapReduce AM asks for a copy's container as it asked for its original's (the
 * split's hosts), with no regard to where the original runs (MAPREDUCE-7169, open), and a
 * speculator cannot shape that request. What it can do: when a copy launches on the
 * NodeManager of another live attempt of its task, kill it with rescheduling
 * ({@code TaskAttemptKillEvent(id, reason, true)}; in Hadoop 2.7.3 and 3.x alike). The AM then starts a
 * new attempt of the task and asks for its container as for a failed map's: any node, no
 * locality (TaskImpl's TA_RESCHEDULE). The RM may still pick the same node, so a task's copy is
 * moved at most {@link HedgeConf#PLACEMENT_MAX_MOVES} times, and then left where it is.
 *
 * <p>What a move costs: the killed copy's container start, and for a map its data locality (the
 * new copy reads its split over the network). What it buys: a copy that does not share whatever
 * slows its original's node, if the ResourceManager puts the new container elsewhere. On the
 * process cluster of scripts/cluster.sh (two NodeManagers on two hosts) that depended on the
 * cluster's start: 3 of 9 moves landed elsewhere over three starts (0 of 4, 3 of 3, 0 of 2; the
 * others on the NodeManager the moved copy had just left). Likely, not shown: the AM and both
 * NodeManagers heartbeat every 250 ms, so whichever NodeManager's heartbeat follows the AM's
 * request comes first every time. Moves are off by default
 * ({@link HedgeConf#PLACEMENT_MOVE}): they cost every job a container start per move and
 * help only where the node, not the attempt, is slow.
 * NodeManagers are compared (host and port), not hosts: a real cluster runs one per host.
 */
final class CopyPlacement {
  private final boolean enabled;
  private final int maxMoves;
  private final Map<TaskId, Integer> moves = new HashMap<>();
  private long moved;
  private long leftOnOriginalNode;

  CopyPlacement(Configuration conf) {
    this(conf.getBoolean(HedgeConf.PLACEMENT_MOVE, false),
        Math.max(0, conf.getInt(HedgeConf.PLACEMENT_MAX_MOVES,
            HedgeConf.DEFAULT_PLACEMENT_MAX_MOVES)));
  }

  CopyPlacement(boolean enabled, int maxMoves) {
    this.enabled = enabled;
    this.maxMoves = maxMoves;
  }

  boolean enabled() {
    return enabled;
  }

  /**
   * Whether a copy that launched on {@code copyNode} should move: another live attempt of its
   * task runs on that NodeManager and the task has moves left (counted when true).
   */
  synchronized boolean shouldMove(TaskId task, NodeId copyNode, Collection<NodeId> others) {
    if (!enabled || copyNode == null || !others.contains(copyNode)) {
      return false;
    }
    int done = moves.getOrDefault(task, 0);
    if (done >= maxMoves) {
      leftOnOriginalNode++;
      return false;
    }
    moves.put(task, done + 1);
    moved++;
    return true;
  }

  /** The moves made so far of this task's copies. */
  synchronized int moves(TaskId task) {
    return moves.getOrDefault(task, 0);
  }

  /** The NodeManagers of the task's other attempts that are not finished. */
  static List<NodeId> othersNodes(Collection<TaskAttempt> attempts, TaskAttemptId copy) {
    List<NodeId> nodes = new ArrayList<>(2);
    for (TaskAttempt a : attempts) {
      NodeId node = a.getNodeId();
      if (!a.getID().equals(copy) && !a.isFinished() && node != null) {
        nodes.add(node);
      }
    }
    return nodes;
  }

  /** The kill that makes the AM ask for the task's new container anywhere. */
  static TaskAttemptKillEvent reschedulingKill(TaskAttemptId id, String reason) {
    return new TaskAttemptKillEvent(id, reason, true);
  }

  /** The settings, for the AM log at start-up (the counts of {@link #summary} are 0 then). */
  String settings() {
    return enabled ? "copies beside their original moved, at most " + maxMoves + " times a task"
        : "copies beside their original not moved (hedge.placement.move off)";
  }

  synchronized String summary() {
    return "copies moved off their original's NodeManager " + moved + ", left there after "
        + maxMoves + " moves " + leftOnOriginalNode + (enabled ? "" : " (off)");
  }
}
