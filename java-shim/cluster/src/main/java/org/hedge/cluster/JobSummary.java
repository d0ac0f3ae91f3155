package org.hedge.cluster;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.CounterGroup;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;

/**
 * What a finished job tells its client, as one JSON object: the job id and state, its start
 * and finish times (ms since the epoch, the AM's clock), every counter as "group/name", and
 * every task attempt's completion event (attempt id, status, run time, node).
 * Written to a temporary file and renamed, so a reader sees all of it or nothing.
 */
final class JobSummary {
  private JobSummary() {}

  static void write(Job job, long submitted, File target) throws IOException,
      InterruptedException {
    StringBuilder json = new StringBuilder("{");
    field(json, "job", job.getJobID().toString()).append(',');
    field(json, "state", job.getJobState().toString()).append(',');
    json.append("\"submitted\":").append(submitted).append(',');
    json.append("\"started\":").append(job.getStartTime()).append(',');
    json.append("\"finished\":").append(job.getFinishTime()).append(',');
    json.append("\"counters\":{");
    String sep = "";
    for (CounterGroup group : job.getCounters()) {
      for (Counter counter : group) {
        json.append(sep);
        field(json, group.getName() + "/" + counter.getName(), counter.getValue());
        sep = ",";
      }
    }
    json.append("},\"attempts\":[");
    sep = "";
    for (TaskCompletionEvent event : events(job)) {
      json.append(sep).append('{');
      field(json, "attempt", event.getTaskAttemptId().toString()).append(',');
      field(json, "status", event.getStatus().toString()).append(',');
      field(json, "run_ms", event.getTaskRunTime()).append(',');
      field(json, "tracker", event.getTaskTrackerHttp()).append('}');
      sep = ",";
    }
    json.append("]}\n");
    File partial = new File(target.getPath() + ".partial");
    try (Writer out = new OutputStreamWriter(new FileOutputStream(partial),
        StandardCharsets.UTF_8)) {
      out.write(json.toString());
    }
    if (!partial.renameTo(target)) {
      throw new IOException("cannot rename " + partial + " to " + target);
    }
  }

  private static List<TaskCompletionEvent> events(Job job) throws IOException,
      InterruptedException {
    List<TaskCompletionEvent> all = new ArrayList<>();
    while (true) {
      TaskCompletionEvent[] page = job.getTaskCompletionEvents(all.size(), 100);
      if (page.length == 0) {
        return all;
      }
      for (TaskCompletionEvent e : page) {
        all.add(e);
      }
    }
  }

  private static StringBuilder field(StringBuilder json, String name, Object value) {
    quote(json, name).append(':');
    return value instanceof Number ? json.append(value) : quote(json, String.valueOf(value));
  }

  private static StringBuilder quote(StringBuilder json, String text) {
    json.append('"');
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        json.append('\\').append(c);
      } else if (c < 0x20) {
        json.append(String.format("\\u%04x", (int) c));
      } else {
        json.append(c);
      }
    }
    return json.append('"');
  }
}
