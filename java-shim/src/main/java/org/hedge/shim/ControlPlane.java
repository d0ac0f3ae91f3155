package org.hedge.shim;

/**
 * What the Python control plane exposes through Py4J (hedge.server.service.EntryPoint).
 * Only session set-up goes through Py4J; scans use the data channel (docs/wire-format.md).
 */
public interface ControlPlane {
  /**
   * Open a session for one job. Returns "OK session-id secret-hex data-port wire-version" or
   * "ERROR reason" (unknown or refused policy, bad parameters, too many sessions).
   *
   * @param params the job's hedge.FAMILY.* entries as key=value lines, prefix stripped
   */
  String open(String jobId, String policy, String params);

  void close(String sessionId);
}
