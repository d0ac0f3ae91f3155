package org.hedge.shim.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.ClusterInfo;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.security.client.ClientToAMTokenSecretManager;
import org.apache.hadoop.yarn.util.Clock;

/** An AppContext around one harness job; the event handler records what the speculator sends. */
public final class HarnessContext implements AppContext {
  /** A clock the harness moves by hand (milliseconds). */
  public static final class SimClock implements Clock {
    volatile long now;

    SimClock(long start) {
      now = start;
    }

    @Override
    public long getTime() {
      return now;
    }
  }

  final ApplicationId appId;
  final HarnessJob job;
  final SimClock clock;
  final long startMs;
  final List<Event> events = Collections.synchronizedList(new ArrayList<Event>());
  private final EventHandler<Event> handler = new EventHandler<Event>() {
    @Override
    public void handle(Event event) {
      events.add(event);
    }
  };

  HarnessContext(ApplicationId appId, HarnessJob job, SimClock clock) {
    this.appId = appId;
    this.job = job;
    this.clock = clock;
    this.startMs = clock.getTime();
  }

  @Override public ApplicationId getApplicationID() { return appId; }
  @Override public ApplicationAttemptId getApplicationAttemptId() { return ApplicationAttemptId.newInstance(appId, 1); }
  @Override public String getApplicationName() { return "hedge-harness"; }
  @Override public long getStartTime() { return startMs; }
  @Override public CharSequence getUser() { return "hedge"; }
  @Override public Job getJob(JobId id) { return job.id.equals(id) ? job : null; }
  @Override public Map<JobId, Job> getAllJobs() { return Collections.<JobId, Job>singletonMap(job.id, job); }
  @Override public EventHandler getEventHandler() { return handler; }
  @Override public Clock getClock() { return clock; }
  @Override public ClusterInfo getClusterInfo() { return new ClusterInfo(); }
  @Override public Set<String> getBlacklistedNodes() { return Collections.emptySet(); }
  @Override public ClientToAMTokenSecretManager getClientToAMTokenSecretManager() { return null; }
  @Override public boolean isLastAMRetry() { return false; }
  @Override public boolean hasSuccessfullyUnregistered() { return false; }
  @Override public String getNMHostname() { return "localhost"; }
}
