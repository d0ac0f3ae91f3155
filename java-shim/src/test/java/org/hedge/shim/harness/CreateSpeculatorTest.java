package org.hedge.shim.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Collections;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.app.speculate.Speculator;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.hedge.shim.HedgeRuntimeEstimator;
import org.hedge.shim.HedgeSpeculator;
import org.junit.jupiter.api.Test;

/** Hadoop 2.7.3's MRAppMaster.createSpeculator builds hedge's classes from a Configuration. */
class CreateSpeculatorTest {

  @Test
  void appMasterBuildsHedgeSpeculatorAndEstimatorFromTheConfiguration() {
    Configuration conf = new Configuration(false);
    conf.set(MRJobConfig.MR_AM_JOB_SPECULATOR, "org.hedge.shim.HedgeSpeculator");
    conf.set(MRJobConfig.MR_AM_TASK_ESTIMATOR, "org.hedge.shim.HedgeRuntimeEstimator");
    ApplicationId app = ApplicationId.newInstance(42L, 1);
    ApplicationAttemptId attempt = ApplicationAttemptId.newInstance(app, 1);
    HarnessJob job = new HarnessJob(
        org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils.newJobId(app, 1), 2, 0);
    HarnessContext ctx = new HarnessContext(app, job, new HarnessContext.SimClock(1000));
    Speculator s = new AppMasterProbe(attempt, ContainerId.newContainerId(attempt, 1))
        .speculatorFor(conf, ctx);
    assertEquals(HedgeSpeculator.class, s.getClass());
    HedgeSpeculator hedge = (HedgeSpeculator) s;
    assertEquals(HedgeRuntimeEstimator.class, hedge.estimator().getClass());
    // no hedge.controlplane.address: Hadoop-default speculation, never an error
    assertFalse(hedge.controlPlaneHealthy());
    hedge.init(conf);
    hedge.start();
    hedge.scanOnce();
    hedge.stop();
    assertEquals(Collections.emptyList(), ctx.events);
    assertEquals(0, hedge.scanLatency()[3]); // only scans that asked a control plane count
  }
}
