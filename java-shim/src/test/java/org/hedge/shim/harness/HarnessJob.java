package org.hedge.shim.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.JobACL;
import org.apache.hadoop.mapreduce.v2.api.records.AMInfo;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.JobReport;
import org.apache.hadoop.mapreduce.v2.api.records.JobState;
import org.apache.hadoop.mapreduce.v2.api.records.Phase;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptCompletionEvent;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptReport;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskReport;
import org.apache.hadoop.mapreduce.v2.api.records.TaskState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.job.Task;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;

/** The harness's Job, Task and TaskAttempt: plain state the script mutates. */
public final class HarnessJob implements Job {
  /** One attempt: where it runs, when it launched, how far it got. */
  public static final class Attempt implements TaskAttempt {
    final TaskAttemptId id;
    final NodeId node;
    final long launchMs;
    final double startupS;
    final double workS;
    TaskAttemptState state = TaskAttemptState.RUNNING;
    float progress;
    long finishMs;

    Attempt(TaskAttemptId id, String host, long launchMs, double startupS, double workS) {
      this.id = id;
      this.node = NodeId.newInstance(host, 45454);
      this.launchMs = launchMs;
      this.startupS = startupS;
      this.workS = workS;
    }

    /** True progress at time ms (0 during JVM start-up, then linear in the work). */
    float progressAt(long ms) {
      double t = (ms - launchMs) / 1000.0 - startupS;
      return (float) Math.max(0.0, Math.min(1.0, t / workS));
    }

    @Override public TaskAttemptId getID() { return id; }
    @Override public TaskAttemptReport getReport() { return null; }
    @Override public List<String> getDiagnostics() { return Collections.emptyList(); }
    @Override public Counters getCounters() { return new Counters(); }
    @Override public float getProgress() { return progress; }
    @Override public Phase getPhase() { return id.getTaskId().getTaskType() == TaskType.MAP ? Phase.MAP : Phase.REDUCE; }
    @Override public TaskAttemptState getState() { return state; }
    @Override public boolean isFinished() { return state != TaskAttemptState.RUNNING; }
    @Override public ContainerId getAssignedContainerID() { return null; }
    @Override public String getAssignedContainerMgrAddress() { return node.toString(); }
    @Override public NodeId getNodeId() { return node; }
    @Override public String getNodeHttpAddress() { return node.getHost() + ":8042"; }
    @Override public String getNodeRackName() { return "/default-rack"; }
    @Override public long getLaunchTime() { return launchMs; }
    @Override public long getFinishTime() { return finishMs; }
    @Override public long getShuffleFinishTime() { return 0; }
    @Override public long getSortFinishTime() { return 0; }
    @Override public int getShufflePort() { return 0; }
  }

  /** One task: its attempts and its work (seconds) on a normal node. */
  public static final class HTask implements Task {
    final TaskId id;
    final Map<TaskAttemptId, TaskAttempt> attempts = new LinkedHashMap<>();
    TaskState state = TaskState.RUNNING;
    int nextAttempt;

    HTask(TaskId id) {
      this.id = id;
    }

    @Override public TaskId getID() { return id; }
    @Override public TaskReport getReport() { return null; }
    @Override public TaskState getState() { return state; }
    @Override public Counters getCounters() { return new Counters(); }
    @Override public float getProgress() {
      float p = 0;
      for (TaskAttempt a : attempts.values()) p = Math.max(p, a.getProgress());
      return p;
    }
    @Override public TaskType getType() { return id.getTaskType(); }
    @Override public Map<TaskAttemptId, TaskAttempt> getAttempts() { return attempts; }
    @Override public TaskAttempt getAttempt(TaskAttemptId a) { return attempts.get(a); }
    @Override public boolean isFinished() { return state == TaskState.SUCCEEDED; }
    @Override public boolean canCommit(TaskAttemptId a) { return true; }
  }

  final JobId id;
  final int maps;
  final int reduces;
  final Map<TaskId, Task> tasks = new LinkedHashMap<>();
  int completedMaps;
  int completedReduces;

  HarnessJob(JobId id, int maps, int reduces) {
    this.id = id;
    this.maps = maps;
    this.reduces = reduces;
    for (int i = 0; i < maps; i++) {
      TaskId t = MRBuilderUtils.newTaskId(id, i, TaskType.MAP);
      tasks.put(t, new HTask(t));
    }
    for (int i = 0; i < reduces; i++) {
      TaskId t = MRBuilderUtils.newTaskId(id, i, TaskType.REDUCE);
      tasks.put(t, new HTask(t));
    }
  }

  HTask task(int index) {
    return (HTask) tasks.get(index < maps ? MRBuilderUtils.newTaskId(id, index, TaskType.MAP)
        : MRBuilderUtils.newTaskId(id, index - maps, TaskType.REDUCE));
  }

  static int index(TaskId t, int maps) {
    return t.getTaskType() == TaskType.MAP ? t.getId() : maps + t.getId();
  }

  @Override public JobId getID() { return id; }
  @Override public String getName() { return "harness"; }
  @Override public JobState getState() { return JobState.RUNNING; }
  @Override public JobReport getReport() { return null; }
  @Override public Counters getAllCounters() { return new Counters(); }
  @Override public Map<TaskId, Task> getTasks() { return tasks; }
  @Override public Map<TaskId, Task> getTasks(TaskType type) {
    Map<TaskId, Task> out = new LinkedHashMap<>();
    for (Map.Entry<TaskId, Task> e : tasks.entrySet()) {
      if (e.getKey().getTaskType() == type) out.put(e.getKey(), e.getValue());
    }
    return out;
  }
  @Override public Task getTask(TaskId t) { return tasks.get(t); }
  @Override public List<String> getDiagnostics() { return new ArrayList<>(); }
  @Override public int getTotalMaps() { return maps; }
  @Override public int getTotalReduces() { return reduces; }
  @Override public int getCompletedMaps() { return completedMaps; }
  @Override public int getCompletedReduces() { return completedReduces; }
  @Override public float getProgress() { return (completedMaps + completedReduces) / (float) tasks.size(); }
  @Override public boolean isUber() { return false; }
  @Override public String getUserName() { return "hedge"; }
  @Override public String getQueueName() { return "default"; }
  @Override public Path getConfFile() { return null; }
  @Override public Configuration loadConfFile() { return new Configuration(false); }
  @Override public Map<JobACL, AccessControlList> getJobACLs() { return Collections.emptyMap(); }
  @Override public TaskAttemptCompletionEvent[] getTaskAttemptCompletionEvents(int a, int b) { return new TaskAttemptCompletionEvent[0]; }
  @Override public TaskCompletionEvent[] getMapAttemptCompletionEvents(int a, int b) { return new TaskCompletionEvent[0]; }
  @Override public List<AMInfo> getAMInfos() { return Collections.emptyList(); }
  @Override public boolean checkAccess(UserGroupInformation u, JobACL a) { return true; }
  @Override public void setQueueName(String q) {}
}
