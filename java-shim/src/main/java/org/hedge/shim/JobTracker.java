package org.hedge.shim;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;

/**
 * What the AM has observed about one job, built from SpeculatorEvents: every live attempt's
 * last report, its first-progress report, its node; completed run times; copies requested but
 * not started. Thread-safe (events arrive on the dispatcher thread, scans run on their own).
 */
final class JobTracker {
  /** AttemptState codes of hedge.model.AttemptState. */
  static final byte RUNNING = 1;
  static final byte SUCCEEDED = 2;
  static final byte KILLED = 3;
  static final byte FAILED = 4;

  /** One live attempt. */
  static final class Attempt {
    final TaskAttemptId id;
    final int key;
    final Task task;
    final boolean map; // cached: Hadoop's record getters are synchronized protobuf accessors
    final int typeIndex;
    long startMs = -1;
    long firstProgressMs = -1;
    float firstProgress;
    float progress;
    long reportMs = -1;
    double bytesProcessed = Double.NaN;
    boolean speculative;
    int node = -2; // -2: not looked up yet, -1: unknown
    boolean dirty; // in the dirty list (changed since the last snapshot)
    boolean ended; // no longer live (a dirty-list entry to skip)
    // neighbours in the tracker's list of live attempts ordered by when they were last heard
    Attempt quieter;
    Attempt louder;

    Attempt(TaskAttemptId id, int key, Task task) {
      this.id = id;
      this.key = key;
      this.task = task;
      TaskId t = id.getTaskId();
      this.map = t.getTaskType() == TaskType.MAP;
      this.typeIndex = t.getId();
    }
  }

  /** One task's bookkeeping. */
  static final class Task {
    final TaskId id;
    final boolean map; // cached (protobuf getters are synchronized)
    // the task's attempts that are live: a success ends them without a walk over the job
    final List<Attempt> attempts = new ArrayList<>(2);
    int pendingCopies;
    int containersNeeded;
    boolean done;

    Task(TaskId id) {
      this.id = id;
      this.map = id.getTaskType() == TaskType.MAP;
    }

    boolean isMap() {
      return map;
    }

    /** Live (running) attempts of this task. */
    int running() {
      return attempts.size();
    }
  }

  /** What the AppContext says about an attempt (the speculator's view of Hadoop's state). */
  interface NodeResolver {
    /** The attempt's host, null when unknown. */
    String host(TaskAttemptId id);

    /** The attempt's state, null when it cannot be looked up. */
    TaskAttemptState state(TaskAttemptId id);
  }

  /**
   * An attempt silent this long is checked against the AppContext: Hadoop sends the
   * speculator no event when an attempt fails or is killed, only when one succeeds.
   */
  static final long STALE_MS = 6000;

  final JobId jobId;
  final long jobStartMs;
  final Map<TaskAttemptId, Attempt> live = new LinkedHashMap<>();
  final Map<TaskId, Task> tasks = new HashMap<>();
  private final Map<Integer, Attempt> byKey = new HashMap<>();
  private final Floats doneMaps = new Floats();
  private final Floats doneReduces = new Floats();
  private final List<String> nodes = new ArrayList<>();
  private final Map<String, Integer> nodeIndex = new HashMap<>();
  private int nextKey;
  // live attempts from the longest silent to the latest heard from (start or report): the
  // stale check walks from the quiet end and stops at the first recent one, instead of
  // walking every live attempt on every scan
  private Attempt quietest;
  private Attempt latest;
  private Scan scan; // reused between scans (arrays grow, never shrink)
  // delta state: attempts changed since the last snapshot; completed run times and ended
  // attempts already sent (the job's whole history is kept: a full snapshot carries it all);
  // a full snapshot is due after any failure or a new session.
  // Primitive lists and a flag per attempt: an update is one field test, never a hash or a box.
  private final List<Attempt> dirty = new ArrayList<>();
  private final Ended ended = new Ended();
  private int endedSent;
  private int doneMapsSent;
  private int doneReducesSent;
  private boolean needFull = true;
  // Hadoop's cap counts, kept as events change them: a scan whose answer asks for copies of
  // open tasks, and every fallback scan, reads them, and walking every live attempt and task
  // for them cost 12.5 ms CPU per call pair at 90,000 live attempts (measured apart)
  private int speculativeLive; // live attempts that are copies
  private int pendingTotal; // sum of the tasks' pendingCopies
  private int tasksRunning; // tasks not done with at least one live attempt

  // control-plane conversation state (scan thread only)
  ControlPlaneClient.Session session;
  String refusal;
  int nodesAcked;
  int seq;
  int fallbacksSinceAnswer;
  long nextScanAt;
  long fallbackQuietUntil;

  JobTracker(JobId jobId, long jobStartMs) {
    this.jobId = jobId;
    this.jobStartMs = jobStartMs;
  }

  private Task task(TaskId id) {
    Task t = tasks.get(id);
    if (t == null) {
      t = new Task(id);
      tasks.put(id, t);
    }
    return t;
  }

  private Attempt attempt(TaskAttemptId id) {
    Attempt a = live.get(id);
    if (a == null) {
      a = new Attempt(id, nextKey++, task(id.getTaskId()));
      live.put(id, a);
      byKey.put(a.key, a);
      if (a.task.attempts.isEmpty()) {
        tasksRunning++; // attempts join only tasks not done (started returns on done ones)
      }
      a.task.attempts.add(a);
      markDirty(a);
    }
    return a;
  }

  /** ATTEMPT_START: the container launched at time ms. */
  synchronized void started(TaskAttemptId id, long ms) {
    Task t = task(id.getTaskId());
    if (t.done || live.containsKey(id)) {
      return;
    }
    boolean speculative = t.running() > 0 || t.pendingCopies > 0;
    Attempt a = attempt(id); // joins t.attempts
    a.startMs = ms;
    heard(a);
    a.speculative = speculative;
    if (speculative) {
      speculativeLive++;
    }
    if (t.pendingCopies > 0) {
      t.pendingCopies--;
      pendingTotal--;
    }
  }

  /** ATTEMPT_STATUS_UPDATE received at time ms; state: the attempt's ({@link AttemptStates}). */
  synchronized void update(TaskAttemptStatus status, TaskAttemptState state, long ms) {
    Task t = task(status.id.getTaskId());
    if (t.done) {
      return;
    }
    if (!live.containsKey(status.id)) {
      if (state != TaskAttemptState.RUNNING) {
        return;
      }
      started(status.id, ms); // the start event was missed: start at first sight
    }
    Attempt a = live.get(status.id);
    float p = Math.max(0f, Math.min(1f, status.progress));
    if (state == TaskAttemptState.RUNNING || state == TaskAttemptState.COMMIT_PENDING
        || state == TaskAttemptState.SUCCEEDED) {
      if (ms >= a.reportMs) {
        a.progress = Math.max(a.progress, p);
        a.reportMs = ms;
        heard(a);
        if (a.firstProgressMs < 0 && p > 0) {
          a.firstProgressMs = ms;
          a.firstProgress = p;
        }
        double bytes = bytesOf(status.counters, t.isMap());
        if (!Double.isNaN(bytes)) {
          a.bytesProcessed = bytes;
        }
        markDirty(a);
      }
    }
    if (state == TaskAttemptState.SUCCEEDED) {
      (t.isMap() ? doneMaps : doneReduces).add((ms - a.startMs) / 1000f);
      finishTask(t, a, ms);
    } else if (state == TaskAttemptState.FAILED || state == TaskAttemptState.KILLED) {
      remove(a, code(state), ms);
    }
  }

  /** TASK_CONTAINER_NEED_UPDATE. */
  synchronized void containerNeed(TaskId id, int delta) {
    Task t = task(id);
    t.containersNeeded = Math.max(0, t.containersNeeded + delta);
  }

  /** A copy was requested for this task (T_ADD_SPEC_ATTEMPT sent). */
  synchronized void copyRequested(Task t) {
    t.pendingCopies++;
    pendingTotal++;
  }

  private void markDirty(Attempt a) {
    if (!a.dirty) {
      a.dirty = true;
      dirty.add(a);
    }
  }

  /** The task succeeded with attempt {@code winner} at ms; Hadoop kills its other attempts. */
  private void finishTask(Task t, Attempt winner, long ms) {
    t.done = true;
    for (Attempt a : t.attempts) {
      forget(a, a == winner ? SUCCEEDED : KILLED, ms);
    }
    if (!t.attempts.isEmpty()) {
      tasksRunning--;
    }
    t.attempts.clear();
    pendingTotal -= t.pendingCopies;
    t.pendingCopies = 0;
  }

  private void remove(Attempt a, byte state, long endMs) {
    forget(a, state, endMs);
    Task t = a.task;
    if (t.attempts.remove(a) && t.attempts.isEmpty() && !t.done) {
      tasksRunning--;
    }
  }

  /** Move the attempt to the recent end of the silence order. */
  private void heard(Attempt a) {
    unlink(a);
    a.quieter = latest;
    if (latest == null) {
      quietest = a;
    } else {
      latest.louder = a;
    }
    latest = a;
  }

  private void unlink(Attempt a) {
    if (a.quieter != null) {
      a.quieter.louder = a.louder;
    } else if (quietest == a) {
      quietest = a.louder;
    }
    if (a.louder != null) {
      a.louder.quieter = a.quieter;
    } else if (latest == a) {
      latest = a.quieter;
    }
    a.quieter = null;
    a.louder = null;
  }

  /**
   * The attempt ended in {@code state} at endMs: it leaves the live set and joins the ended
   * history (the next delta and every full snapshot name it).
   */
  private void forget(Attempt a, byte state, long endMs) {
    unlink(a);
    live.remove(a.id);
    byKey.remove(a.key);
    if (a.speculative && !a.ended) {
      speculativeLive--;
    }
    a.ended = true; // its dirty-list entry, if any, is skipped
    // the task index needs nMaps, known at fill time: a reduce is stored as -1 - its index
    int task = a.map ? a.typeIndex : -1 - a.typeIndex;
    ended.add(a.key, task, a.node, rel(a.startMs), rel(endMs), state, a.speculative);
    if (a.node == -2) {
      ended.resolveLater(a.id); // started and ended between two scans: node not looked up
    }
  }

  private static byte code(TaskAttemptState state) {
    return state == TaskAttemptState.SUCCEEDED ? SUCCEEDED
        : state == TaskAttemptState.FAILED ? FAILED : KILLED;
  }

  /** The live attempt {@code id}, null when it is not live. */
  synchronized Attempt liveAttempt(TaskAttemptId id) {
    return live.get(id);
  }

  synchronized Attempt byKey(int key) {
    return byKey.get(key);
  }

  /** TA_KILL was sent for this attempt at ms: it no longer counts as live. */
  synchronized void killed(Attempt a, long ms) {
    if (live.containsKey(a.id)) {
      remove(a, KILLED, ms);
    }
  }

  /** Running speculative attempts plus copies requested and not started (Hadoop's cap count). */
  synchronized int speculating() {
    return speculativeLive + pendingTotal;
  }

  /** Tasks with at least one running attempt. */
  synchronized int runningTasks() {
    return tasksRunning;
  }

  /** The next scan must carry everything (after a failure, a rejection or a new session). */
  synchronized void resync() {
    needFull = true;
  }

  /**
   * The scan to send: a full snapshot (every live attempt, every completed run time, every
   * attempt ended so far) when one is due, else a delta (attempts changed and ended since the
   * last snapshot, new completions); node names not yet acknowledged either way.
   */
  Scan snapshot(long nowMs, int nMaps, int nReduces, NodeResolver resolver) {
    if (resolver != null) {
      dropEnded(nowMs, resolver);
    }
    synchronized (this) {
      return fill(nowMs, nMaps, nReduces, resolver);
    }
  }

  /** The snapshot's rows and lists (under the lock: events wait for this only). */
  private Scan fill(long nowMs, int nMaps, int nReduces, NodeResolver resolver) {
    boolean full = needFull;
    java.util.Collection<Attempt> rows = full ? live.values() : dirty;
    Scan s = scan == null || scan.capacity() < rows.size()
        ? new Scan(Math.max(16, rows.size() + rows.size() / 2)) : scan;
    scan = s;
    s.delta = !full;
    s.jobStartMs = jobStartMs;
    s.nMaps = nMaps;
    s.nReduces = nReduces;
    int i = 0;
    long latest = nowMs;
    for (Attempt a : rows) {
      a.dirty = false; // a delta's rows are the dirty list: cleared in this one pass
      if (a.ended) {
        continue; // ended after it changed: its key is in the removed list
      }
      latest = Math.max(latest, Math.max(a.reportMs, Math.max(a.startMs, a.firstProgressMs)));
      if (a.node == -2) {
        a.node = nodeOf(a.id, resolver);
      }
      putRow(s, i++, a, nMaps);
    }
    s.rows = i;
    // A status update can land between the caller's clock read and this lock (dropEnded asks
    // the AM first): the snapshot is as of its latest observation, never before it; the
    // server refuses a report received after the scan time (seen on a busy 1,000-task AM).
    s.nowMs = latest;
    s.doneMapRuntimes = doneMaps.copy(full ? 0 : doneMapsSent);
    s.doneReduceRuntimes = doneReduces.copy(full ? 0 : doneReducesSent);
    resolveEndedNodes(resolver); // before the node names are listed below
    // repeats (a full snapshot's, a failed scan's) are harmless: the server counts a key once
    ended.into(s, full ? 0 : endedSent, nMaps);
    endedSent = ended.size();
    doneMapsSent = doneMaps.n;
    doneReducesSent = doneReduces.n;
    if (full) {
      for (Attempt a : dirty) {
        a.dirty = false;
      }
    }
    dirty.clear();
    needFull = false;
    s.nodeBase = Math.min(nodesAcked, nodes.size());
    StringBuilder names = new StringBuilder();
    for (int k = s.nodeBase; k < nodes.size(); k++) {
      if (k > s.nodeBase) {
        names.append('\n');
      }
      names.append(nodes.get(k));
    }
    s.newNodeNames = names.toString().getBytes(StandardCharsets.UTF_8);
    return s;
  }

  /**
   * Row i of the scan from attempt a: a short method called once per row, which the JIT
   * compiles sooner than fill (called once per scan; on a loaded 2-core host fill's C2 code
   * came about 100 scans after its C1 code).
   */
  private void putRow(Scan s, int i, Attempt a, int nMaps) {
    boolean map = a.map;
    s.task[i] = map ? a.typeIndex : nMaps + a.typeIndex;
    s.attempt[i] = a.key;
    s.node[i] = a.node;
    s.start[i] = rel(a.startMs);
    s.firstProgressTime[i] = rel(a.firstProgressMs);
    s.report[i] = rel(a.reportMs);
    s.firstProgress[i] = a.firstProgressMs < 0 ? 0f : a.firstProgress;
    s.progress[i] = a.progress;
    s.bytesProcessed[i] = a.bytesProcessed;
    s.inputBytes[i] = Double.NaN;
    s.taskType[i] = (byte) (map ? 0 : 1);
    s.state[i] = RUNNING;
    s.speculative[i] = (byte) (a.speculative ? 1 : 0);
  }

  /**
   * Forget attempts Hadoop ended without telling the speculator (failed, or killed by someone
   * else; our own kills are dropped when sent, and a task's success ends all its attempts).
   * Checked: attempts silent for STALE_MS, one AppContext lookup each; healthy attempts
   * report every few seconds and cost nothing here.
   */
  private void dropEnded(long nowMs, NodeResolver resolver) {
    List<Attempt> stale = null;
    synchronized (this) {
      // events arrive in time order, so the silence order is (nearly) sorted by last heard;
      // an attempt out of place is reached once those before it report again
      for (Attempt a = quietest; a != null
          && nowMs - Math.max(a.reportMs, a.startMs) > STALE_MS; a = a.louder) {
        if (stale == null) {
          stale = new ArrayList<>();
        }
        stale.add(a);
      }
    }
    if (stale == null) {
      return;
    }
    // Hadoop's attempt state is read outside our lock: it takes the attempt's own lock, and
    // events must not wait for that behind a scan.
    List<Attempt> gone = new ArrayList<>();
    List<TaskAttemptState> states = new ArrayList<>();
    for (Attempt a : stale) {
      TaskAttemptState state = resolver.state(a.id);
      if (state == TaskAttemptState.FAILED || state == TaskAttemptState.KILLED
          || state == TaskAttemptState.SUCCEEDED) {
        gone.add(a);
        states.add(state);
      }
    }
    synchronized (this) {
      for (int i = 0; i < gone.size(); i++) {
        Attempt a = gone.get(i);
        if (!a.ended) { // an event may have ended it meanwhile
          // the AM sent no event: the end is not known, the last report is a lower bound
          remove(a, code(states.get(i)), Math.max(a.reportMs, a.startMs));
        }
      }
    }
  }

  /** The node of ended attempts never looked up while live (under the lock, in fill). */
  private void resolveEndedNodes(NodeResolver resolver) {
    Ints at = ended.unresolvedAt;
    for (int i = 0; i < at.n; i++) {
      ended.node.values[at.values[i]] = nodeOf(ended.unresolvedIds.get(i), resolver);
    }
    at.clear();
    ended.unresolvedIds.clear();
  }

  /** The attempt's node index, -1 when the AppContext does not know its host. */
  private int nodeOf(TaskAttemptId id, NodeResolver resolver) {
    String host = resolver == null ? null : resolver.host(id);
    return host == null ? -1 : nodeIndex(host);
  }

  /** The server has every node name of this scan. */
  synchronized void nodesAcknowledged(Scan s) {
    nodesAcked = s.nodeBase + countNames(s.newNodeNames);
  }

  private static int countNames(byte[] names) {
    if (names.length == 0) {
      return 0;
    }
    int n = 1;
    for (byte b : names) {
      if (b == '\n') {
        n++;
      }
    }
    return n;
  }

  private int nodeIndex(String host) {
    Integer index = nodeIndex.get(host);
    if (index == null) {
      index = nodes.size();
      nodes.add(host.replace('\n', ' '));
      nodeIndex.put(host, index);
    }
    return index;
  }

  private int rel(long ms) {
    if (ms < 0) {
      return WireFormat.MISSING;
    }
    long d = ms - jobStartMs;
    return (int) Math.max(WireFormat.MISSING + 1L, Math.min(Integer.MAX_VALUE, d));
  }

  /** A growable float list (completed run times) without boxing. */
  static final class Floats {
    float[] values = new float[16];
    int n;

    void add(float v) {
      if (n == values.length) {
        values = java.util.Arrays.copyOf(values, 2 * n);
      }
      values[n++] = v;
    }

    float[] copy(int from) {
      return java.util.Arrays.copyOfRange(values, from, n);
    }
  }

  /**
   * Every attempt the job has ended, in the order they ended: the wire's ended columns, row by
   * row. Primitive columns, no Attempt kept alive: 28 bytes an attempt (up to twice that while
   * the lists grow); only an attempt whose node is still to be looked up keeps its id.
   */
  static final class Ended {
    final Ints key = new Ints();
    final Ints task = new Ints(); // maps: the index; reduces: -1 - the index
    final Ints node = new Ints(); // -2 until resolved (see unresolvedAt)
    final Ints start = new Ints();
    final Ints end = new Ints();
    final Ints state = new Ints();
    final Ints speculative = new Ints();
    // rows whose node is -2, and their attempts: resolved (then cleared) at the next fill
    final Ints unresolvedAt = new Ints();
    final List<TaskAttemptId> unresolvedIds = new ArrayList<>();

    void add(int k, int taskCode, int nodeIndex, int startRel, int endRel, byte code,
        boolean copy) {
      key.add(k);
      task.add(taskCode);
      node.add(nodeIndex);
      start.add(startRel);
      end.add(endRel);
      state.add(code);
      speculative.add(copy ? 1 : 0);
    }

    /** The last row added needs its node looked up for this attempt. */
    void resolveLater(TaskAttemptId id) {
      unresolvedAt.add(key.n - 1);
      unresolvedIds.add(id);
    }

    int size() {
      return key.n;
    }

    /** Rows from..size() into the scan's ended columns (input bytes unknown to the AM). */
    void into(Scan s, int from, int nMaps) {
      int n = key.n - from;
      s.removed = key.copy(from);
      s.removedNode = node.copy(from);
      s.removedStart = start.copy(from);
      s.removedEnd = end.copy(from);
      s.removedTask = new int[n];
      s.removedState = new byte[n];
      s.removedSpeculative = new byte[n];
      s.removedInputBytes = new double[n];
      java.util.Arrays.fill(s.removedInputBytes, Double.NaN);
      for (int i = 0; i < n; i++) {
        int t = task.values[from + i];
        s.removedTask[i] = t >= 0 ? t : nMaps - 1 - t;
        s.removedState[i] = (byte) state.values[from + i];
        s.removedSpeculative[i] = (byte) speculative.values[from + i];
      }
    }
  }

  /** A growable int list without boxing. */
  static final class Ints {
    int[] values = new int[16];
    int n;

    void add(int v) {
      if (n == values.length) {
        values = java.util.Arrays.copyOf(values, 2 * n);
      }
      values[n++] = v;
    }

    int[] copy(int from) {
      return java.util.Arrays.copyOfRange(values, from, n);
    }

    void clear() {
      n = 0;
    }
  }

  /** Input bytes read so far: BYTES_READ for maps, shuffled bytes for reduces (NaN: none). */
  private static double bytesOf(Counters counters, boolean map) {
    if (counters == null) {
      return Double.NaN;
    }
    try {
      Counter c = map ? counters.findCounter(FileInputFormatCounter.BYTES_READ)
          : counters.findCounter(TaskCounter.REDUCE_SHUFFLE_BYTES);
      return c == null ? Double.NaN : (double) c.getValue();
    } catch (RuntimeException e) {
      return Double.NaN; // counters are a hint; never let them break a scan
    }
  }
}
