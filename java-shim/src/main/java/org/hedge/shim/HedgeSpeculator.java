package org.hedge.shim;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.job.Task;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptEventType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskEventType;
import org.apache.hadoop.mapreduce.v2.app.speculate.LegacyTaskRuntimeEstimator;
import org.apache.hadoop.mapreduce.v2.app.speculate.Speculator;
import org.apache.hadoop.mapreduce.v2.app.speculate.SpeculatorEvent;
import org.apache.hadoop.mapreduce.v2.app.speculate.TaskRuntimeEstimator;
import org.apache.hadoop.service.AbstractService;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.util.Clock;

/**
 * hedge's speculator for the MapReduce ApplicationMaster
 * (yarn.app.mapreduce.am.job.speculator.class = org.hedge.shim.HedgeSpeculator).
 *
 * <p>It keeps what SpeculatorEvents tell about each attempt ({@link JobTracker}), and every scan
 * (default 1 s) sends one snapshot per job to the control plane and applies the answer:
 * T_ADD_SPEC_ATTEMPT once per requested copy, TA_KILL per retired attempt, within
 * {@link ActionLimits}: the per-type switches, Hadoop's mapreduce.job.speculative.* caps (unless
 * hedge.caps.enforce=false) and never a task's last attempt. The AM restarts every attempt it
 * kills, so a kill is sent only as one of its task's copies ({@link KillsAsRestarts}). The server cut its answer to the
 * same rules (the settings travel with the policy parameters); the shim checks again with what
 * only it knows (copies not started yet, tasks finished since the snapshot). When the control plane is
 * unconfigured, unreachable, late, or answers something invalid, that scan is decided by
 * {@link HadoopDefaultFallback} on the configured runtime estimator, so a job never waits on hedge
 * and never fails because of it.
 */
public class HedgeSpeculator extends AbstractService implements Speculator {
  private static final Log LOG = LogFactory.getLog(HedgeSpeculator.class);

  private final AppContext context;
  private final Clock clock;
  private final TaskRuntimeEstimator estimator;
  private final EventHandler<?> eventHandler;
  private final ControlPlaneClient client;
  private final ConcurrentMap<JobId, JobTracker> jobs = new ConcurrentHashMap<>();
  private final String policy;
  private final String policyParams;
  private final long jobDeadlineMs;
  private final long scanIntervalMs;
  private final long retryAfterSpeculateMs;
  // the job's per-type switches and speculative caps (ActionLimits: the rules of
  // hedge.policy.limits, which the server applies too)
  private final ActionLimits limits;
  private final boolean background;
  // moves a copy that launched on its original's NodeManager (MAPREDUCE-7169)
  private final CopyPlacement placement;
  // hedge.debug.record.dir: where the actions applied per scan are written beside the frames
  private final File recordDir;
  private volatile boolean stopped;
  private Thread scanThread;
  private ByteBuffer frameBuffer;
  private long copiesSent;
  private long killsSent;
  private long killsHeld; // kills a stock AM could only carry out as restarts (KillsAsRestarts)
  private long fallbackCopies;
  // nanoseconds building+encoding snapshots, in round trips, the number of such scans, and
  // microseconds of server CPU the answers reported (round trip minus it: transport + waiting)
  private final long[] timings = new long[4];
  // per scan that asked the control plane: snapshot + encoding + round trip (the decision
  // latency), the job's task count and the most attempt rows one snapshot carried
  private final LatencyHistogram scanLatency = new LatencyHistogram();
  private volatile int scannedTasks;
  private volatile int scannedRows;

  public HedgeSpeculator(Configuration conf, AppContext context) {
    this(conf, context, context.getClock());
  }

  public HedgeSpeculator(Configuration conf, AppContext context, Clock clock) {
    this(conf, context, clock, createEstimator(conf, context), createClient(conf));
  }

  /** For harnesses: explicit estimator and client (null client: fallback only). */
  public HedgeSpeculator(Configuration conf, AppContext context, Clock clock,
      TaskRuntimeEstimator estimator, ControlPlaneClient client) {
    super(HedgeSpeculator.class.getName());
    this.context = context;
    this.clock = clock;
    this.estimator = estimator;
    this.eventHandler = context.getEventHandler();
    this.client = client;
    this.policy = conf.getTrimmed(HedgeConf.POLICY, "");
    this.limits = ActionLimits.of(conf);
    // the job's speculation settings unlike Hadoop's defaults, its map container and its
    // ResourceManager's web address travel with the policy parameters (under names which no
    // parameter has)
    this.policyParams = paramsOf(conf, policy) + limits.params() + containerParams(conf)
        + ResourceManagerAddress.params(conf);
    this.jobDeadlineMs = conf.getLong(HedgeConf.JOB_DEADLINE_MS, -1);
    this.scanIntervalMs = Math.max(10, conf.getLong(HedgeConf.SCAN_INTERVAL_MS,
        HedgeConf.DEFAULT_SCAN_INTERVAL_MS));
    this.retryAfterSpeculateMs = conf.getLong(MRJobConfig.SPECULATIVE_RETRY_AFTER_SPECULATE,
        MRJobConfig.DEFAULT_SPECULATIVE_RETRY_AFTER_SPECULATE);
    this.background = conf.getBoolean(HedgeConf.BACKGROUND_SCANS, true);
    this.placement = new CopyPlacement(conf);
    String record = conf.getTrimmed(HedgeConf.RECORD_DIR, "");
    this.recordDir = record.isEmpty() ? null : new File(record);
    LOG.info("hedge: speculator for " + context.getApplicationID() + ", control plane "
        + (client == null ? "none (Hadoop-default speculation)" : client.address())
        + ", policy " + (policy.isEmpty() ? "(server default)" : policy)
        + ", estimator " + estimator.getClass().getName() + "; " + placement.settings());
  }

  /** The estimator Hadoop would build: yarn.app.mapreduce.am.job.task.estimator.class. */
  static TaskRuntimeEstimator createEstimator(Configuration conf, AppContext context) {
    TaskRuntimeEstimator estimator;
    try {
      Class<? extends TaskRuntimeEstimator> cls = conf.getClass(MRJobConfig.MR_AM_TASK_ESTIMATOR,
          LegacyTaskRuntimeEstimator.class, TaskRuntimeEstimator.class);
      estimator = cls.getConstructor().newInstance();
    } catch (Exception | LinkageError e) {
      LOG.error("hedge: cannot build the configured task estimator (" + e
          + "); using LegacyTaskRuntimeEstimator");
      estimator = new LegacyTaskRuntimeEstimator();
    }
    estimator.contextualize(conf, context);
    return estimator;
  }

  /** The control-plane client, or null (logged) when hedge is not configured usably. */
  static ControlPlaneClient createClient(Configuration conf) {
    String address = conf.getTrimmed(HedgeConf.ADDRESS, "");
    if (address.isEmpty()) {
      LOG.warn("hedge: " + HedgeConf.ADDRESS + " is not set; Hadoop-default speculation only");
      return null;
    }
    int port = HedgeConf.port(address);
    try {
      if (port < 0) {
        throw new IllegalArgumentException(HedgeConf.ADDRESS + " = " + address
            + ": expected host:port, the address 'hedge serve --address' listens on");
      }
      String token = HedgeConf.readToken(conf.getTrimmed(HedgeConf.TOKEN_FILE, ""));
      String record = conf.getTrimmed(HedgeConf.RECORD_DIR, "");
      return new ControlPlaneClient(HedgeConf.host(address), port, token,
          conf.getInt(HedgeConf.DEADLINE_MS, HedgeConf.DEFAULT_DEADLINE_MS),
          conf.getLong(HedgeConf.BACKOFF_INITIAL_MS, HedgeConf.DEFAULT_BACKOFF_INITIAL_MS),
          conf.getLong(HedgeConf.BACKOFF_MAX_MS, HedgeConf.DEFAULT_BACKOFF_MAX_MS),
          record.isEmpty() ? null : new File(record), ControlPlaneTls.fromConf(conf));
    } catch (IOException | RuntimeException e) {
      LOG.warn("hedge: control plane not usable (" + e.getMessage() + "); Hadoop-default "
          + "speculation only");
      return null;
    }
  }

  /** The job's hedge.FAMILY.* entries as key=value lines, prefix stripped. */
  static String paramsOf(Configuration conf, String policy) {
    if (policy.isEmpty()) {
      return "";
    }
    String prefix = HedgeConf.paramPrefix(policy);
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, String> e : conf) {
      String key = e.getKey();
      if (key.startsWith(prefix) && key.length() > prefix.length()) {
        sb.append(key.substring(prefix.length())).append('=')
            .append(conf.getTrimmed(key)).append('\n');
      }
    }
    return sb.toString();
  }

  /**
   * The job's map container where its configuration sets one (MB, vcores > 0), as key=value
   * lines: a speculator sees no headroom, so hedge serve counts the cluster's free slots from
   * the ResourceManager, in containers of this size (its own default for a missing one).
   */
  static String containerParams(Configuration conf) {
    StringBuilder sb = new StringBuilder();
    for (String key : new String[] {MRJobConfig.MAP_MEMORY_MB, MRJobConfig.MAP_CPU_VCORES}) {
      int value = conf.getInt(key, -1);
      if (value > 0) {
        sb.append(key).append('=').append(value).append('\n');
      }
    }
    return sb.toString();
  }

  @Override
  protected void serviceStart() throws Exception {
    if (background) {
      scanThread = new Thread(new Runnable() {
        @Override
        public void run() {
          scanLoop();
        }
      }, "hedge-speculator");
      scanThread.setDaemon(true);
      scanThread.start();
    }
    super.serviceStart();
  }

  @Override
  protected void serviceStop() throws Exception {
    stopped = true;
    if (scanThread != null) {
      scanThread.interrupt();
    }
    if (client != null) {
      for (JobTracker job : jobs.values()) {
        client.close(job.session);
      }
      client.close();
    }
    LOG.info("hedge: speculator stopped; copies " + copiesSent + " (fallback " + fallbackCopies
        + "), kills " + killsSent + " (held " + killsHeld + "); per scan: snapshot "
        + (timings[2] == 0 ? 0 : timings[0] / timings[2] / 1000) + " us, round trip "
        + (timings[2] == 0 ? 0 : timings[1] / timings[2] / 1000) + " us; "
        + placement.summary());
    LOG.info("hedge: scan latency ms " + scanLatency.summaryMs() + " (snapshot, encoding and "
        + "round trip per scan; tasks " + scannedTasks + ", attempt rows up to " + scannedRows
        + ")");
    super.serviceStop();
  }

  private void scanLoop() {
    while (!stopped && !Thread.currentThread().isInterrupted()) {
      long delay;
      try {
        delay = scanOnce();
      } catch (RuntimeException e) {
        LOG.error("hedge: scan failed (speculation continues next scan)", e);
        delay = scanIntervalMs;
      }
      try {
        Thread.sleep(Math.max(10, delay));
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  // ---- events -------------------------------------------------------------------------------

  @Override
  public void handle(SpeculatorEvent event) {
    try {
      switch (event.getType()) {
        case JOB_CREATE:
          estimator.contextualize(getConfig() == null ? new Configuration() : getConfig(),
              context);
          tracker(event.getJobID(), event.getTimestamp());
          break;
        case ATTEMPT_START:
          TaskAttemptStatus started = event.getReportedStatus();
          estimator.enrollAttempt(started, event.getTimestamp());
          JobTracker job = tracker(started.id.getTaskId().getJobId(), -1);
          job.started(started.id, event.getTimestamp());
          placeCopy(job, started.id, event.getTimestamp());
          break;
        case ATTEMPT_STATUS_UPDATE:
          statusUpdate(event.getReportedStatus(), event.getTimestamp());
          break;
        case TASK_CONTAINER_NEED_UPDATE:
          TaskId task = event.getTaskID();
          tracker(task.getJobId(), -1).containerNeed(task, event.containersNeededChange());
          break;
        default:
          break;
      }
    } catch (RuntimeException e) {
      LOG.warn("hedge: ignoring speculator event " + event.getType() + ": " + e);
    }
  }

  @Override
  public void handleAttempt(TaskAttemptStatus status) {
    statusUpdate(status, clock.getTime());
  }

  /**
   * A copy that launched on the NodeManager of another live attempt of its task is killed so
   * that its task's new attempt asks for a container anywhere ({@link CopyPlacement}); that
   * attempt stands for the copy, as after any kill the shim sends ({@link KillsAsRestarts}).
   */
  private void placeCopy(JobTracker job, TaskAttemptId id, long ms) {
    JobTracker.Attempt a = placement.enabled() ? job.liveAttempt(id) : null;
    if (a == null || !a.speculative) {
      return;
    }
    Job j = context.getJob(id.getTaskId().getJobId());
    Task task = j == null ? null : j.getTask(id.getTaskId());
    TaskAttempt copy = task == null ? null : task.getAttempt(id);
    if (copy == null || !placement.shouldMove(id.getTaskId(), copy.getNodeId(),
        CopyPlacement.othersNodes(task.getAttempts().values(), id))) {
      return;
    }
    LOG.info("hedge: copy " + id + " launched on " + copy.getNodeId() + ", the NodeManager of "
        + "another attempt of its task: killed, its task's new attempt asks for any node "
        + "(move " + placement.moves(id.getTaskId()) + ")");
    job.copyRequested(a.task);
    dispatch(CopyPlacement.reschedulingKill(id, "hedge: copy launched on the NodeManager of "
        + "another attempt of its task; placed again"));
    job.killed(a, ms);
  }

  private void statusUpdate(TaskAttemptStatus status, long timestamp) {
    estimator.updateAttempt(status, timestamp);
    tracker(status.id.getTaskId().getJobId(), -1).update(status,
        AttemptStates.of(context, status), timestamp);
  }

  private JobTracker tracker(JobId id, long createdMs) {
    JobTracker t = jobs.get(id);
    if (t == null) {
      long start = createdMs >= 0 ? createdMs : context.getStartTime();
      JobTracker fresh = new JobTracker(id, start > 0 ? start : clock.getTime());
      t = jobs.putIfAbsent(id, fresh);
      if (t == null) {
        t = fresh;
      }
    }
    return t;
  }

  // ---- scans --------------------------------------------------------------------------------

  /** Scan every job that is due; returns milliseconds until the next scan is due. */
  public long scanOnce() {
    long now = clock.getTime();
    long next = now + scanIntervalMs;
    for (JobTracker job : jobs.values()) {
      if (job.nextScanAt <= now) {
        job.nextScanAt = now + scan(job, now);
      }
      next = Math.min(next, job.nextScanAt);
    }
    return Math.max(0, next - now);
  }

  /** One scan of one job; returns the delay until its next scan. */
  long scan(JobTracker job, long now) {
    Job j = context.getJob(job.jobId);
    if (j == null) {
      return scanIntervalMs;
    }
    int nMaps = j.getTotalMaps();
    int nReduces = j.getTotalReduces();
    Decision d = null;
    if (client != null && job.refusal == null) {
      d = askControlPlane(job, j, nMaps, nReduces, now);
    }
    if (d != null) {
      job.fallbacksSinceAnswer = 0;
      apply(job, j, d, nMaps);
      return d.nextScanMs < 0 || d.nextScanMs == Integer.MAX_VALUE ? scanIntervalMs
          : Math.max(10, d.nextScanMs);
    }
    job.fallbacksSinceAnswer++;
    if (client != null) {
      client.countFallback();
    }
    if (now >= job.fallbackQuietUntil) {
      int copies = 0;
      int room = capRoom(job);
      for (JobTracker.Task t : HadoopDefaultFallback.choose(job, estimator, now, limits, nMaps,
          nReduces)) {
        if (room-- <= 0) {
          break;
        }
        copy(job, t);
        copies++;
        fallbackCopies++;
      }
      if (copies > 0) {
        job.fallbackQuietUntil = now + retryAfterSpeculateMs;
      }
    }
    return scanIntervalMs;
  }

  private Decision askControlPlane(JobTracker job, Job j, int nMaps, int nReduces, long now) {
    try {
      return askOnce(job, j, nMaps, nReduces, now);
    } catch (ControlPlaneClient.SessionLostException e) {
      job.session = null; // the server restarted: one new session, same scan
      try {
        return askOnce(job, j, nMaps, nReduces, now);
      } catch (ControlPlaneClient.SessionLostException again) {
        job.session = null;
        return null;
      }
    }
  }

  private Decision askOnce(JobTracker job, Job j, int nMaps, int nReduces, long now)
      throws ControlPlaneClient.SessionLostException {
    if (job.session == null) {
      try {
        job.session = client.open(job.jobId.toString(), policy, policyParams, now);
      } catch (ControlPlaneClient.RefusedException e) {
        job.refusal = e.getMessage();
        LOG.warn("hedge: control plane refused job " + job.jobId + ": " + e.getMessage()
            + "; this job uses Hadoop-default speculation");
        return null;
      }
      if (job.session == null) {
        return null;
      }
      job.nodesAcked = 0;
      job.resync();
    }
    long t0 = System.nanoTime();
    Scan scan = job.snapshot(now, nMaps, nReduces, resolver(j));
    scan.seq = ++job.seq;
    scan.fallbacks = job.fallbacksSinceAnswer;
    scan.deadlineMs = jobDeadlineMs >= 0 ? job.jobStartMs + jobDeadlineMs : -1;
    frameBuffer = WireFormat.encode(scan, frameBuffer);
    long t1 = System.nanoTime();
    Decision d;
    try {
      d = client.scan(job.session, scan, frameBuffer, job.jobId.toString(), now);
    } catch (ControlPlaneClient.SessionLostException e) {
      job.resync();
      throw e;
    }
    if (d == null) {
      job.resync(); // the server may not have applied this delta: send everything next time
    }
    long t2 = System.nanoTime();
    timings[0] += t1 - t0;
    timings[1] += t2 - t1;
    timings[2]++;
    scanLatency.record(t2 - t0);
    scannedTasks = Math.max(scannedTasks, nMaps + nReduces);
    scannedRows = Math.max(scannedRows, scan.rows);
    if (d != null) {
      timings[3] += d.serverCpuMicros;
      job.nodesAcknowledged(scan);
    }
    return d;
  }

  private JobTracker.NodeResolver resolver(final Job j) {
    return new JobTracker.NodeResolver() {
      @Override
      public String host(TaskAttemptId id) {
        try {
          TaskAttempt attempt = attempt(id);
          NodeId node = attempt == null ? null : attempt.getNodeId();
          return node == null ? null : node.getHost();
        } catch (RuntimeException e) {
          return null;
        }
      }

      @Override
      public TaskAttemptState state(TaskAttemptId id) {
        try {
          TaskAttempt attempt = attempt(id);
          return attempt == null ? null : attempt.getState();
        } catch (RuntimeException e) {
          return null;
        }
      }

      private TaskAttempt attempt(TaskAttemptId id) {
        Task task = j.getTask(id.getTaskId());
        return task == null ? null : task.getAttempt(id);
      }
    };
  }

  /** Hadoop's cap on concurrently speculating attempts of one job. */
  int allowedSpeculations(JobTracker job, int totalTasks) {
    return limits.allowed(totalTasks, job.runningTasks());
  }

  /** Carry out the control plane's answer within {@link ActionLimits}. */
  private void apply(JobTracker job, Job j, Decision d, int nMaps) {
    int n = d.specTask.length;
    JobTracker.Task[] tasks = new JobTracker.Task[n];
    boolean[] open = new boolean[n];
    boolean any = false;
    for (int i = 0; i < n; i++) {
      int index = d.specTask[i];
      boolean map = index < nMaps;
      TaskId id = org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils.newTaskId(job.jobId,
          map ? index : index - nMaps, map ? org.apache.hadoop.mapreduce.v2.api.records.TaskType.MAP
              : org.apache.hadoop.mapreduce.v2.api.records.TaskType.REDUCE);
      synchronized (job) {
        tasks[i] = job.tasks.get(id);
      }
      open[i] = tasks[i] != null && !tasks[i].done;
      any |= open[i] && limits.speculates(map);
    }
    // capRoom walks every attempt and task: only when there is something to cap
    int[] granted = limits.copies(nMaps, any ? capRoom(job) : 0, d.specTask, d.specCopies, open);
    // a stock AM restarts every killed attempt (KillsAsRestarts): a kill is sent only as one of
    // its task's copies, whose new attempt the AM then starts itself
    JobTracker.Attempt[] killed = killable(job, d.killAttempt, nMaps);
    int[] requested = granted.clone();
    boolean[] send = KillsAsRestarts.pair(killTasks(killed, nMaps), d.specTask, requested);
    for (int i = 0; i < n; i++) {
      for (int c = 0; c < requested[i]; c++) {
        copy(job, tasks[i]);
      }
    }
    for (int k = 0; k < killed.length; k++) {
      if (send[k]) {
        restart(job, killed[k]);
      } else if (killed[k] != null) {
        hold(job, killed[k]);
      }
    }
    recordApplied(job, d.specTask, granted, d.killAttempt, send);
  }

  /**
   * The attempts the answer's kills name that ActionLimits rule 4 lets go (null: unknown,
   * named twice, or its task's last live attempt).
   */
  private JobTracker.Attempt[] killable(JobTracker job, int[] keys, int nMaps) {
    JobTracker.Attempt[] attempts = new JobTracker.Attempt[keys.length];
    int[] killTask = new int[keys.length];
    int[] live = new int[keys.length];
    java.util.Set<Integer> named = new java.util.HashSet<>();
    for (int i = 0; i < keys.length; i++) {
      JobTracker.Attempt a = job.byKey(keys[i]);
      boolean fresh = named.add(keys[i]);
      attempts[i] = a;
      killTask[i] = a == null || !fresh ? -1 : taskIndex(a.task, nMaps);
      live[i] = a == null ? 0 : a.task.running();
    }
    boolean[] keep = ActionLimits.kills(killTask, live); // never a task's last attempt
    for (int i = 0; i < keep.length; i++) {
      attempts[i] = keep[i] ? attempts[i] : null;
    }
    return attempts;
  }

  private static int[] killTasks(JobTracker.Attempt[] attempts, int nMaps) {
    int[] task = new int[attempts.length];
    for (int i = 0; i < attempts.length; i++) {
      task[i] = attempts[i] == null ? -1 : taskIndex(attempts[i].task, nMaps);
    }
    return task;
  }

  /** TA_KILL: the AM ends the attempt and starts a new one of its task, one of its copies. */
  private void restart(JobTracker job, JobTracker.Attempt a) {
    job.copyRequested(a.task);
    dispatch(new TaskAttemptEvent(a.id, TaskAttemptEventType.TA_KILL));
    job.killed(a, clock.getTime());
    killsSent++;
    copiesSent++;
  }

  /** A kill no copy pairs with is not sent: the AM would restart the attempt from nothing. */
  private void hold(JobTracker job, JobTracker.Attempt a) {
    if (killsHeld++ == 0) {
      LOG.info("hedge: kill of " + a.id + " held (and every later one no copy pairs with): a "
          + "stock MapReduce AM starts a new attempt in place of each killed one, so the "
          + "attempt runs on until its task ends");
    }
  }

  private static int taskIndex(JobTracker.Task t, int nMaps) {
    return t.isMap() ? t.id.getId() : nMaps + t.id.getId();
  }

  /** hedge.debug.record.dir: JOB-SEQ.applied beside the frames, what this scan carried out. */
  private void recordApplied(JobTracker job, int[] task, int[] granted, int[] kill,
      boolean[] keep) {
    if (recordDir == null) {
      return;
    }
    StringBuilder tasks = new StringBuilder();
    StringBuilder copies = new StringBuilder();
    StringBuilder kills = new StringBuilder();
    for (int i = 0; i < task.length; i++) {
      if (granted[i] > 0) {
        tasks.append(tasks.length() == 0 ? "" : ",").append(task[i]);
        copies.append(copies.length() == 0 ? "" : ",").append(granted[i]);
      }
    }
    for (int i = 0; i < kill.length; i++) {
      if (keep[i]) {
        kills.append(kills.length() == 0 ? "" : ",").append(kill[i]);
      }
    }
    File file = new File(recordDir, job.jobId + "-" + job.seq + ".applied");
    try (java.io.Writer out = new java.io.OutputStreamWriter(
        new java.io.FileOutputStream(file), java.nio.charset.StandardCharsets.UTF_8)) {
      out.write("tasks=[" + tasks + "]\ncopies=[" + copies + "]\nkills=[" + kills + "]\n");
    } catch (IOException e) {
      LOG.debug("hedge: cannot record " + file + ": " + e);
    }
  }

  /** How many more copies the caps allow now (unbounded when hedge.caps.enforce=false). */
  private int capRoom(JobTracker job) {
    Job j = context.getJob(job.jobId);
    int total = j == null ? 0 : j.getTotalMaps() + j.getTotalReduces();
    return limits.enforceCaps ? limits.room(total, job.runningTasks(), job.speculating())
        : Integer.MAX_VALUE;
  }

  /** Send one T_ADD_SPEC_ATTEMPT for the task. */
  private void copy(JobTracker job, JobTracker.Task t) {
    job.copyRequested(t);
    dispatch(new TaskEvent(t.id, TaskEventType.T_ADD_SPEC_ATTEMPT));
    copiesSent++;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void dispatch(org.apache.hadoop.yarn.event.Event event) {
    ((EventHandler) eventHandler).handle(event);
  }

  /** The runtime estimator the fallback uses (yarn.app.mapreduce.am.job.task.estimator.class). */
  public TaskRuntimeEstimator estimator() {
    return estimator;
  }

  /**
   * {ns building and encoding snapshots, ns in round trips, scans, us of server CPU reported by
   * the answers} since the start.
   */
  public long[] scanTimings() {
    return timings.clone();
  }

  /**
   * {p50, p99, max} nanoseconds and the count of the scans that asked the control plane
   * (snapshot, encoding and round trip each), as logged at stop.
   */
  public long[] scanLatency() {
    return new long[] {scanLatency.percentileNanos(0.5), scanLatency.percentileNanos(0.99),
        scanLatency.maxNanos(), scanLatency.count()};
  }

  /** Copies sent so far (control plane and fallback). */
  public long copiesSent() {
    return copiesSent;
  }

  public long fallbackCopies() {
    return fallbackCopies;
  }

  /** True while the control plane answers (false: this AM is on the fallback). */
  public boolean controlPlaneHealthy() {
    return client != null && client.healthy();
  }
}
