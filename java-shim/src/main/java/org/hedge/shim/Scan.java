package org.hedge.shim;

/**
 * One job at one scan as the shim sends it: the header facts and one row per live attempt,
 * column by column (the Java twin of hedge.model.Snapshot; see docs/wire-format.md). Times
 * are milliseconds relative to {@link #jobStartMs}, {@link WireFormat#MISSING} when unknown.
 */
final class Scan {
  int seq;
  long nowMs;
  long jobStartMs;
  long deadlineMs = -1;
  int nMaps;
  int nReduces;
  int nodeBase;
  byte[] newNodeNames = new byte[0];
  int fallbacks;
  int totalSlots = -1;
  int freeSlots = -1;
  /** Only attempts changed since the last answered scan (else a full snapshot). */
  boolean delta;
  /**
   * Ended attempts, carried by delta scans (those ended since the last scan was built) and by
   * full snapshots (every attempt ended so far): key, task index, node index (-1 unknown),
   * start and end (relative ms, MISSING unknown), final AttemptState code, 1 if a copy, input
   * bytes (NaN unknown).
   */
  int[] removed = new int[0];
  int[] removedTask = new int[0];
  int[] removedNode = new int[0];
  int[] removedStart = new int[0];
  int[] removedEnd = new int[0];
  byte[] removedState = new byte[0];
  byte[] removedSpeculative = new byte[0];
  double[] removedInputBytes = new double[0];
  float[] doneMapRuntimes = new float[0];
  float[] doneReduceRuntimes = new float[0];

  int rows;
  double[] bytesProcessed;
  double[] inputBytes;
  int[] task;
  int[] attempt;
  int[] node;
  int[] start;
  int[] firstProgressTime;
  int[] report;
  float[] firstProgress;
  float[] progress;
  byte[] taskType;
  byte[] state;
  byte[] speculative;

  int capacity() {
    return task.length;
  }

  /** Arrays for up to `rows` attempts (the row count is set by the filler). */
  Scan(int rows) {
    this.rows = rows;
    bytesProcessed = new double[rows];
    inputBytes = new double[rows];
    task = new int[rows];
    attempt = new int[rows];
    node = new int[rows];
    start = new int[rows];
    firstProgressTime = new int[rows];
    report = new int[rows];
    firstProgress = new float[rows];
    progress = new float[rows];
    taskType = new byte[rows];
    state = new byte[rows];
    speculative = new byte[rows];
  }
}
