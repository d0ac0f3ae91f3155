package org.hedge.shim.harness;

import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskState;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptEventType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskEventType;
import org.apache.hadoop.mapreduce.v2.app.speculate.Speculator;
import org.apache.hadoop.mapreduce.v2.app.speculate.SpeculatorEvent;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.event.Event;
import org.hedge.shim.HedgeSpeculator;

/**
 * Runs one scripted MapReduce job against a speculator built by Hadoop's own
 * MRAppMaster.createSpeculator, on a simulated clock (1 s per tick). Every first attempt launches
 * at t=0, spends startupS in JVM start-up, then progresses linearly through its work; planted
 * stragglers work `factor` times slower; attempts report every 3 s (offset by task index), and
 * the speculator sees exactly the SpeculatorEvents an AM would send (JOB_CREATE, ATTEMPT_START,
 * ATTEMPT_STATUS_UPDATE, TASK_CONTAINER_NEED_UPDATE). T_ADD_SPEC_ATTEMPT launches a copy on a
 * normal node one tick later; TA_KILL kills the attempt and, while its task has not succeeded,
 * starts a new attempt of it one tick later, as TaskImpl does; when an attempt finishes, its
 * task's other attempts are killed, as Hadoop does.
 */
public class AmHarness {
  final Configuration conf;
  final HarnessContext ctx;
  final HarnessJob job;
  final Speculator speculator;
  final PrintStream out;
  final double baseWorkS;
  final double startupS;
  final Map<Integer, Double> stragglers;
  final List<long[]> pendingLaunches = new ArrayList<>(); // {task index, launch ms}
  final Map<TaskAttemptId, Long> nextReport = new HashMap<>();
  int copies;
  int kills;
  private Method defaultScan;

  public AmHarness(Configuration conf, int maps, int reduces, double baseWorkS, double startupS,
      Map<Integer, Double> stragglers, long clusterTimestamp, PrintStream out) {
    this.conf = conf;
    this.baseWorkS = baseWorkS;
    this.startupS = startupS;
    this.stragglers = stragglers;
    this.out = out;
    ApplicationId app = ApplicationId.newInstance(clusterTimestamp, 1);
    JobId jobId = MRBuilderUtils.newJobId(app, 1);
    job = new HarnessJob(jobId, maps, reduces);
    ctx = new HarnessContext(app, job, new HarnessContext.SimClock(1_700_000_000_000L));
    ApplicationAttemptId attempt = ApplicationAttemptId.newInstance(app, 1);
    AppMasterProbe am = new AppMasterProbe(attempt, ContainerId.newContainerId(attempt, 1));
    speculator = am.speculatorFor(conf, ctx);
    ((Service) speculator).init(conf);
    if (speculator instanceof HedgeSpeculator) {
      ((Service) speculator).start();
    }
  }

  long now() {
    return ctx.clock.getTime();
  }

  double seconds() {
    return (now() - ctx.startMs) / 1000.0;
  }

  /** JOB_CREATE and the launch of every task's first attempt. */
  public void begin() {
    speculator.handle(new SpeculatorEvent(job.id, now()));
    for (int i = 0; i < job.maps + job.reduces; i++) {
      double factor = stragglers.containsKey(i) ? stragglers.get(i) : 1.0;
      String host = factor > 1.0 ? "host-slow" : "host-" + (i % 4);
      speculator.handle(new SpeculatorEvent(job.task(i).id, 1)); // scheduled: needs a container
      launch(i, host, work(i) * factor);
    }
  }

  double work(int index) {
    return baseWorkS * (1.0 + 0.05 * (index % 5));
  }

  void launch(int index, String host, double workS) {
    HarnessJob.HTask t = job.task(index);
    speculator.handle(new SpeculatorEvent(t.id, -1)); // container assigned
    TaskAttemptId id = MRBuilderUtils.newTaskAttemptId(t.id, t.nextAttempt++);
    HarnessJob.Attempt a = new HarnessJob.Attempt(id, host, now(), startupS, workS);
    t.attempts.put(id, a);
    nextReport.put(id, now() + 1000L * (1 + index % 3));
    speculator.handle(new SpeculatorEvent(id, true, now()));
  }

  void report(HarnessJob.Attempt a, TaskAttemptState state) {
    TaskAttemptStatus s = new TaskAttemptStatus();
    s.id = a.id;
    s.progress = a.progress;
    s.taskState = state;
    s.phase = a.getPhase();
    s.stateString = state.toString();
    speculator.handle(new SpeculatorEvent(s, now()));
  }

  /** Deliver due reports and completions for this tick. */
  void reports() {
    for (HarnessJob.HTask t : tasks()) {
      if (t.state == TaskState.SUCCEEDED) {
        continue;
      }
      for (TaskAttempt ta : new ArrayList<>(t.attempts.values())) {
        HarnessJob.Attempt a = (HarnessJob.Attempt) ta;
        if (a.state != TaskAttemptState.RUNNING) {
          continue;
        }
        float p = a.progressAt(now());
        if (p >= 1f) {
          a.progress = 1f;
          a.state = TaskAttemptState.SUCCEEDED;
          a.finishMs = now();
          report(a, TaskAttemptState.SUCCEEDED);
          finish(t, a);
          break;
        }
        if (now() >= nextReport.get(a.id)) {
          a.progress = p;
          report(a, TaskAttemptState.RUNNING);
          nextReport.put(a.id, now() + 3000);
        }
      }
    }
  }

  void finish(HarnessJob.HTask t, HarnessJob.Attempt winner) {
    t.state = TaskState.SUCCEEDED;
    if (t.getType() == org.apache.hadoop.mapreduce.v2.api.records.TaskType.MAP) {
      job.completedMaps++;
    } else {
      job.completedReduces++;
    }
    out.println("FINISH t=" + seconds() + " task=" + HarnessJob.index(t.id, job.maps)
        + " attempt=" + winner.id.getId());
    for (TaskAttempt other : t.attempts.values()) {
      HarnessJob.Attempt o = (HarnessJob.Attempt) other;
      if (o != winner && o.state == TaskAttemptState.RUNNING) {
        o.state = TaskAttemptState.KILLED; // Hadoop tells the speculator nothing about kills
      }
    }
  }

  List<HarnessJob.HTask> tasks() {
    List<HarnessJob.HTask> out = new ArrayList<>();
    for (org.apache.hadoop.mapreduce.v2.app.job.Task t : job.tasks.values()) {
      out.add((HarnessJob.HTask) t);
    }
    return out;
  }

  /** One speculation scan of whichever speculator Hadoop built. */
  public void scan() {
    if (speculator instanceof HedgeSpeculator) {
      ((HedgeSpeculator) speculator).scanOnce();
      return;
    }
    try {
      if (defaultScan == null) {
        // DefaultSpeculator scans on its own thread; the harness runs the same private method
        // on the simulated clock (benchmark and comparison only).
        defaultScan = speculator.getClass().getDeclaredMethod("computeSpeculations");
        defaultScan.setAccessible(true);
      }
      defaultScan.invoke(speculator);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Apply what the speculator asked for since the last tick. */
  void applyEvents() {
    List<Event> events;
    synchronized (ctx.events) {
      events = new ArrayList<>(ctx.events);
      ctx.events.clear();
    }
    for (Event e : events) {
      if (e instanceof TaskEvent && e.getType() == TaskEventType.T_ADD_SPEC_ATTEMPT) {
        TaskEvent te = (TaskEvent) e;
        int index = HarnessJob.index(te.getTaskID(), job.maps);
        copies++;
        out.println("COPY t=" + seconds() + " task=" + index);
        speculator.handle(new SpeculatorEvent(te.getTaskID(), 1));
        pendingLaunches.add(new long[] {index, now() + 1000});
      } else if (e instanceof TaskAttemptEvent
          && e.getType() == TaskAttemptEventType.TA_KILL) {
        TaskAttemptId id = ((TaskAttemptEvent) e).getTaskAttemptID();
        HarnessJob.Attempt a = (HarnessJob.Attempt) job.getTask(id.getTaskId()).getAttempt(id);
        if (a != null && a.state == TaskAttemptState.RUNNING) {
          a.state = TaskAttemptState.KILLED;
          kills++;
          out.println("KILL t=" + seconds() + " attempt=" + id);
          restart(id.getTaskId());
        }
      }
    }
  }

  /** TaskImpl starts a new attempt in place of a killed one while its task has not succeeded. */
  private void restart(TaskId task) {
    int index = HarnessJob.index(task, job.maps);
    if (job.task(index).state != TaskState.SUCCEEDED) {
      out.println("RESTART t=" + seconds() + " task=" + index);
      speculator.handle(new SpeculatorEvent(task, 1));
      pendingLaunches.add(new long[] {index, now() + 1000});
    }
  }

  void launches() {
    for (long[] p : new ArrayList<>(pendingLaunches)) {
      if (p[1] <= now()) {
        pendingLaunches.remove(p);
        HarnessJob.HTask t = job.task((int) p[0]);
        if (t.state == TaskState.SUCCEEDED) {
          speculator.handle(new SpeculatorEvent(t.id, -1)); // request withdrawn
        } else {
          launch((int) p[0], "host-copy", work((int) p[0]));
        }
      }
    }
  }

  public boolean done() {
    for (HarnessJob.HTask t : tasks()) {
      if (t.state != TaskState.SUCCEEDED) {
        return false;
      }
    }
    return true;
  }

  /** One simulated second: launches, reports, a scan, the speculator's requests. */
  public void tick() {
    ctx.clock.now += 1000;
    launches();
    reports();
    scan();
    applyEvents();
  }

  public void stop() {
    ((Service) speculator).stop();
  }

  public Speculator speculator() {
    return speculator;
  }
}
