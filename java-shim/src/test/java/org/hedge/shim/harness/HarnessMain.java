package org.hedge.shim.harness;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.hedge.shim.HedgeSpeculator;

/**
 * Command-line driver of {@link AmHarness} for the pytest integration tests.
 *
 * <pre>
 * --maps N --reduces N --work S --startup S --straggler INDEX:FACTOR ... --conf KEY=VALUE ...
 * --max-time S --pause-at S ... (prints "PAUSE t=S", waits for a line on stdin)
 * --sessions K (K concurrent jobs in K threads, one speculator and client each)
 * --tick-sleep-ms N (real time per simulated second)
 * </pre>
 * Output lines: COPY, KILL, FINISH, HEALTH (on change), PAUSE, DONE (one per job).
 */
public final class HarnessMain {
  private HarnessMain() {}

  public static void main(String[] args) throws Exception {
    org.apache.log4j.BasicConfigurator.configure(new org.apache.log4j.ConsoleAppender(
        new org.apache.log4j.PatternLayout("%p %c{1} %m%n"), "System.err"));
    org.apache.log4j.Logger.getRootLogger().setLevel(org.apache.log4j.Level.WARN);
    org.apache.log4j.Logger.getLogger("org.hedge").setLevel(org.apache.log4j.Level.INFO);
    final Configuration conf = new Configuration(false);
    conf.set(MRJobConfig.MR_AM_JOB_SPECULATOR, HedgeSpeculator.class.getName());
    conf.set(MRJobConfig.MR_AM_TASK_ESTIMATOR, "org.hedge.shim.HedgeRuntimeEstimator");
    conf.setBoolean("hedge.speculator.background", false);
    int maps = 20;
    int reduces = 0;
    double work = 30;
    double startup = 2;
    double maxTime = 600;
    int sessions = 1;
    long tickSleep = 0;
    final Map<Integer, Double> stragglers = new HashMap<>();
    final Set<Integer> pauses = new HashSet<>();
    for (int i = 0; i < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--maps": maps = Integer.parseInt(v); break;
        case "--reduces": reduces = Integer.parseInt(v); break;
        case "--work": work = Double.parseDouble(v); break;
        case "--startup": startup = Double.parseDouble(v); break;
        case "--max-time": maxTime = Double.parseDouble(v); break;
        case "--sessions": sessions = Integer.parseInt(v); break;
        case "--tick-sleep-ms": tickSleep = Long.parseLong(v); break;
        case "--pause-at": pauses.add(Integer.parseInt(v)); break;
        case "--straggler": {
          String[] f = v.split(":");
          stragglers.put(Integer.parseInt(f[0]), Double.parseDouble(f[1]));
          break;
        }
        case "--conf": {
          int eq = v.indexOf('=');
          conf.set(v.substring(0, eq), v.substring(eq + 1));
          break;
        }
        default: throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    final PrintStream out = new PrintStream(System.out, true, "UTF-8");
    final BufferedReader in = new BufferedReader(
        new InputStreamReader(System.in, StandardCharsets.UTF_8));
    final int fMaps = maps, fReduces = reduces;
    final double fWork = work, fStartup = startup, fMax = maxTime;
    final long fSleep = tickSleep;
    List<Thread> threads = new ArrayList<>();
    final boolean concurrent = sessions > 1;
    for (int k = 0; k < sessions; k++) {
      final int id = k;
      Runnable run = new Runnable() {
        @Override
        public void run() {
          try {
            runOne(conf, fMaps, fReduces, fWork, fStartup, stragglers, fMax, fSleep,
                concurrent ? new HashSet<Integer>() : pauses, id, out, in, concurrent);
          } catch (Exception e) {
            out.println("ERROR session=" + id + " " + e);
            e.printStackTrace();
          }
        }
      };
      Thread t = new Thread(run, "harness-" + k);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    System.exit(0);
  }

  static void runOne(Configuration conf, int maps, int reduces, double work, double startup,
      Map<Integer, Double> stragglers, double maxTime, long tickSleep, Set<Integer> pauses,
      int id, PrintStream out, BufferedReader in, boolean concurrent) throws Exception {
    final String prefix = concurrent ? "[" + id + "] " : "";
    PrintStream sink = concurrent ? new PrefixedStream(out, prefix) : out;
    AmHarness h = new AmHarness(new Configuration(conf), maps, reduces, work, startup,
        stragglers, 1_700_000_000_000L + id, sink);
    h.begin();
    Boolean healthy = null;
    while (!h.done() && h.seconds() < maxTime) {
      int t = (int) Math.round(h.seconds());
      if (pauses.contains(t)) {
        out.println("PAUSE t=" + t);
        in.readLine();
      }
      h.tick();
      if (h.speculator() instanceof HedgeSpeculator) {
        boolean now = ((HedgeSpeculator) h.speculator()).controlPlaneHealthy();
        if (healthy == null || now != healthy) {
          sink.println("HEALTH t=" + h.seconds() + " healthy=" + now);
          healthy = now;
        }
      }
      if (tickSleep > 0) {
        Thread.sleep(tickSleep);
      }
    }
    long fallback = h.speculator() instanceof HedgeSpeculator
        ? ((HedgeSpeculator) h.speculator()).fallbackCopies() : -1;
    sink.println("DONE completed=" + h.done() + " t=" + h.seconds() + " copies=" + h.copies
        + " kills=" + h.kills + " fallback_copies=" + fallback);
    h.stop();
  }

  /** Prefixes every line (one per concurrent session). */
  static final class PrefixedStream extends PrintStream {
    private final PrintStream target;
    private final String prefix;

    PrefixedStream(PrintStream target, String prefix) {
      super(target, true);
      this.target = target;
      this.prefix = prefix;
    }

    @Override
    public void println(String line) {
      target.println(prefix + line);
    }
  }
}
