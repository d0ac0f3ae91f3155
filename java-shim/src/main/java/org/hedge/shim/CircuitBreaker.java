package org.hedge.shim;

/**
 * Reconnect back-off and circuit breaker in one: after a failure the control plane is not
 * asked again until the back-off has passed (doubling per consecutive failure, capped); the
 * first call after that is the half-open probe. A success closes the breaker. Not thread-safe:
 * the speculator's scan thread is its only user.
 */
final class CircuitBreaker {
  private final long initialMs;
  private final long maxMs;
  private long backoffMs;
  private long openUntil;
  private int failures;

  CircuitBreaker(long initialMs, long maxMs) {
    this.initialMs = Math.max(1, initialMs);
    this.maxMs = Math.max(this.initialMs, maxMs);
    this.backoffMs = this.initialMs;
  }

  /** May a call be made at time now (ms)? */
  boolean allows(long now) {
    return now >= openUntil;
  }

  void success() {
    failures = 0;
    openUntil = 0;
    backoffMs = initialMs;
  }

  void failure(long now) {
    failures++;
    openUntil = now + backoffMs;
    backoffMs = Math.min(maxMs, backoffMs * 2);
  }

  int consecutiveFailures() {
    return failures;
  }

  long openUntil() {
    return openUntil;
  }
}
