package org.hedge.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CircuitBreakerTest {

  @Test
  void backOffDoublesUpToTheCapAndResetsOnSuccess() {
    CircuitBreaker b = new CircuitBreaker(1000, 3000);
    assertTrue(b.allows(0));
    b.failure(0);
    assertFalse(b.allows(999));
    assertTrue(b.allows(1000));
    b.failure(1000); // 2 s
    assertEquals(3000, b.openUntil());
    b.failure(3000); // capped at 3 s
    assertEquals(6000, b.openUntil());
    b.failure(6000);
    assertEquals(9000, b.openUntil());
    assertEquals(4, b.consecutiveFailures());
    b.success();
    assertTrue(b.allows(9000 - 1));
    b.failure(10000);
    assertEquals(11000, b.openUntil()); // back to the initial back-off
  }
}
