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

  /**
   * The ImKP mapping file {@code name} from the control plane's {@code [imkp] mappings}
   * directory (a map task's {@code hedge.imkp.mapping.fetch}; one call per task). Returns the
   * file's bytes, which start with the magic {@code HEDGEIMK}, or the UTF-8 bytes of
   * {@code "ERROR reason"} when the server refuses (serving off, not a plain {@code *.imkp}
   * name, no such file, corrupt file): a refusal reaches Java as a message, not a traceback.
   */
  byte[] mapping(String name);
}
