package org.hedge.shim;

import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;

/**
 * What the AM lets a policy's answer do: the Java twin of {@code hedge.policy.limits}, which
 * states the rules (the simulator and {@code hedge serve} apply them there). The shim applies
 * them once more because only it knows copies requested and not started yet and tasks that
 * finished since the snapshot. Both sides are checked against
 * {@code tests/data/action_limits_vectors.tsv}, written by Python.
 *
 * <ol>
 *   <li>no copy of a map when {@code mapreduce.map.speculative} is false, of a reduce when
 *       {@code mapreduce.reduce.speculative} is false;
 *   <li>no copy of a completed (or unknown) task;
 *   <li>speculative attempts (running copies plus copies not started) within {@code
 *       max(minimum-allowed-tasks, cap-total-tasks x tasks, cap-running-tasks x running
 *       tasks)}, over the whole job, copy by copy in the answer's order ({@code
 *       hedge.caps.enforce=false} lifts this rule only);
 *   <li>a kill only while its task keeps another live attempt not killed by this answer.
 * </ol>
 */
final class ActionLimits {
  final boolean mapSpeculative;
  final boolean reduceSpeculative;
  final double capRunning;
  final double capTotal;
  final int minimumAllowed;
  final boolean enforceCaps;

  ActionLimits(boolean mapSpeculative, boolean reduceSpeculative, double capRunning,
      double capTotal, int minimumAllowed, boolean enforceCaps) {
    this.mapSpeculative = mapSpeculative;
    this.reduceSpeculative = reduceSpeculative;
    this.capRunning = capRunning;
    this.capTotal = capTotal;
    this.minimumAllowed = minimumAllowed;
    this.enforceCaps = enforceCaps;
  }

  /** The job's settings, with Hadoop's defaults (MRJobConfig) where it sets none. */
  static ActionLimits of(Configuration conf) {
    return new ActionLimits(
        conf.getBoolean(MRJobConfig.MAP_SPECULATIVE, true),
        conf.getBoolean(MRJobConfig.REDUCE_SPECULATIVE, true),
        conf.getDouble(MRJobConfig.SPECULATIVECAP_RUNNING_TASKS,
            MRJobConfig.DEFAULT_SPECULATIVECAP_RUNNING_TASKS),
        conf.getDouble(MRJobConfig.SPECULATIVECAP_TOTAL_TASKS,
            MRJobConfig.DEFAULT_SPECULATIVECAP_TOTAL_TASKS),
        conf.getInt(MRJobConfig.SPECULATIVE_MINIMUM_ALLOWED_TASKS,
            MRJobConfig.DEFAULT_SPECULATIVE_MINIMUM_ALLOWED_TASKS),
        conf.getBoolean(HedgeConf.ENFORCE_CAPS, true));
  }

  /**
   * The settings that differ from Hadoop's defaults as key=value lines under their property
   * names: sent with the policy parameters when a session opens, so the server cuts its
   * answers to the same limits (it takes Hadoop's defaults for the others).
   */
  String params() {
    ActionLimits d = of(new Configuration(false));
    StringBuilder sb = new StringBuilder();
    line(sb, MRJobConfig.MAP_SPECULATIVE, mapSpeculative, d.mapSpeculative);
    line(sb, MRJobConfig.REDUCE_SPECULATIVE, reduceSpeculative, d.reduceSpeculative);
    line(sb, MRJobConfig.SPECULATIVECAP_RUNNING_TASKS, capRunning, d.capRunning);
    line(sb, MRJobConfig.SPECULATIVECAP_TOTAL_TASKS, capTotal, d.capTotal);
    line(sb, MRJobConfig.SPECULATIVE_MINIMUM_ALLOWED_TASKS, minimumAllowed, d.minimumAllowed);
    line(sb, HedgeConf.ENFORCE_CAPS, enforceCaps, d.enforceCaps);
    return sb.toString();
  }

  private static void line(StringBuilder sb, String key, Object value, Object standard) {
    if (!value.equals(standard)) {
      sb.append(key).append('=').append(value).append('\n');
    }
  }

  boolean speculates(boolean map) {
    return map ? mapSpeculative : reduceSpeculative;
  }

  /** Hadoop's cap on concurrently speculating attempts of one job (rounded down). */
  int allowed(int totalTasks, int runningTasks) {
    return (int) Math.max(minimumAllowed, Math.max(capTotal * totalTasks,
        capRunning * runningTasks));
  }

  /** Copies the caps allow now (rule 3); Integer.MAX_VALUE when caps are not enforced. */
  int room(int totalTasks, int runningTasks, int speculating) {
    return enforceCaps ? allowed(totalTasks, runningTasks) - speculating : Integer.MAX_VALUE;
  }

  /**
   * Copies granted per request (rules 1-3): request i asks copies[i] of task[i] (maps are
   * task < nMaps), open[i] says the task has not completed, room is {@link #room}.
   */
  int[] copies(int nMaps, int room, int[] task, int[] copies, boolean[] open) {
    int[] granted = new int[task.length];
    for (int i = 0; i < task.length && room > 0; i++) {
      if (!open[i] || !speculates(task[i] < nMaps)) {
        continue;
      }
      granted[i] = Math.max(0, Math.min(copies[i], room));
      room -= granted[i];
    }
    return granted;
  }

  /**
   * Which kills are carried out (rule 4), in order: killTask[i] is the task of the attempt
   * (-1: unknown or already named, never carried out), live[i] that task's live attempts
   * before this answer.
   */
  static boolean[] kills(int[] killTask, int[] live) {
    boolean[] keep = new boolean[killTask.length];
    Map<Integer, Integer> left = new HashMap<>();
    for (int i = 0; i < killTask.length; i++) {
      if (killTask[i] < 0) {
        continue;
      }
      Integer n = left.get(killTask[i]);
      int count = n == null ? live[i] : n;
      if (count > 1) {
        keep[i] = true;
        left.put(killTask[i], count - 1);
      }
    }
    return keep;
  }
}
