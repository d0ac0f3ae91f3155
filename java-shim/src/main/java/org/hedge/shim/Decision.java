package org.hedge.shim;

/** The control plane's answer to one scan (decoded and checked by {@link WireFormat}). */
final class Decision {
  static final int STATUS_OK = 0;
  static final int STATUS_REJECTED = 1;

  int status;
  int seq;
  /** -1: default period; Integer.MAX_VALUE: no timed rescan wanted. */
  int nextScanMs = -1;
  boolean wakeOnCompletion;
  int[] specTask = new int[0];
  int[] specCopies = new int[0];
  int[] preferNode = new int[0];
  int[] killAttempt = new int[0];
  String message = "";
  /** The server's CPU time for this decision, microseconds (saturates at 65,535). */
  int serverCpuMicros;

  int copiesRequested() {
    int total = 0;
    for (int c : specCopies) {
      total += c;
    }
    return total;
  }
}
