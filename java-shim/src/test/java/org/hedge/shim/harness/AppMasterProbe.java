package org.hedge.shim.harness;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.MRAppMaster;
import org.apache.hadoop.mapreduce.v2.app.speculate.Speculator;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;

/**
 * A real MRAppMaster (Hadoop 2.7.3) used only to call its protected createSpeculator: the AM
 * builds the speculator exactly as in production (class from
 * yarn.app.mapreduce.am.job.speculator.class, constructor (Configuration, AppContext) by
 * reflection inside Hadoop). Subclass access is the ordinary way to reach a protected method.
 */
final class AppMasterProbe extends MRAppMaster {
  AppMasterProbe(ApplicationAttemptId attempt, ContainerId container) {
    super(attempt, container, "localhost", 0, 0, System.currentTimeMillis());
  }

  Speculator speculatorFor(Configuration conf, AppContext context) {
    return createSpeculator(conf, context);
  }
}
