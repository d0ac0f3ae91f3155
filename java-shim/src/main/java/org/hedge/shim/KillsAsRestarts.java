package org.hedge.shim;

/**
 * What a kill can do in a stock MapReduce ApplicationMaster. TaskImpl answers every killed
 * attempt of a task that has not succeeded with a new attempt of that task
 * (AttemptKilledTransition, in Hadoop 2.7.3, 3.3.6 and 3.4.1 alike; seen on a real YARN
 * cluster: a copy killed by hedge was followed within 30 ms by a new attempt nobody asked for).
 * So a kill there is a restart, never a freed container, and nothing in the AM's interface ends
 * an attempt without that (failing it instead counts against mapreduce.map.maxattempts and
 * against its node).
 *
 * <p>The shim therefore carries out a policy's kill only as one of the copies the same answer
 * asks for that attempt's task: the AM's new attempt is that copy, and the shim does not request
 * it a second time. A kill no copy pairs with is held: the attempt runs on until its task ends
 * (the AM kills it then), as Hadoop's own speculator leaves a losing attempt, instead of being
 * restarted from nothing in its place.
 */
final class KillsAsRestarts {
  private KillsAsRestarts() {}

  /**
   * Which kills to send, in the answer's order: killTask[i] is the task of kill i, -1 for a kill
   * not carried out anyway (ActionLimits rule 4). copyTask/copies are the answer's copies after
   * the caps; copies is lowered in place by the kills sent, whose new attempts stand for them.
   */
  static boolean[] pair(int[] killTask, int[] copyTask, int[] copies) {
    boolean[] send = new boolean[killTask.length];
    for (int k = 0; k < killTask.length; k++) {
      // answers are short (copies within Hadoop's caps): a scan over them per kill is enough
      for (int i = 0; i < copyTask.length && killTask[k] >= 0 && !send[k]; i++) {
        if (copyTask[i] == killTask[k] && copies[i] > 0) {
          copies[i]--;
          send[k] = true;
        }
      }
    }
    return send;
  }
}
