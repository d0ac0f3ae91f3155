"""Benchmark: ``optimal_r`` (Algorithm 1) for N = 10,000 tasks vs brute force over r in [0, 300].

Target (issue 5): optimal_r <= 10 ms. The baseline is the vectorised brute force (U at all
301 values of r in one numpy call, then argmax), measured in the same run; both must pick the
same r. Run: ``.venv/bin/python tests/bench/bench_chronos.py``.
"""

from __future__ import annotations

import time

import numpy as np

from hedge.analysis import chronos

N = 10_000
# (D, t_min, beta, theta, r_min) per instance; taus from chronos.default_taus
INSTANCES = [(3.0, 1.0, 1.5, 1e-4, 0.0), (40.0, 10.0, 1.2, 1e-5, 0.9), (2.0, 1.0, 2.5, 1e-3, 0.5),
             (1.5, 1.0, 1.1, 1e-4, 0.3)]


def best_of(fn, repeat: int = 7, number: int = 50) -> float:
    """Best mean seconds per call over ``repeat`` rounds of ``number`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main() -> None:
    print(f"optimal_r, N = {N}: Algorithm 1 vs brute force over r in [0, 300]")
    print(f"{'strategy':8} {'D':>5} {'t_min':>5} {'beta':>4} {'r_min':>5} {'r':>3} "
          f"{'opt ms':>7} {'brute ms':>8} {'opt/brute':>9}")
    worst = 0.0
    for strategy in ("clone", "restart", "resume"):
        for d, t, b, theta, r_min in INSTANCES:
            args = (strategy, N, d, t, b)
            kw = dict(theta=theta, price=1.0, r_min=r_min)
            r = chronos.optimal_r(*args, **kw)[0]
            brute = int(np.argmax(chronos.utility(*args, r=np.arange(301), **kw)))
            assert r == brute, (args, r, brute)
            opt = best_of(lambda args=args, kw=kw: chronos.optimal_r(*args, **kw))
            bf = best_of(lambda args=args, kw=kw: np.argmax(
                chronos.utility(*args, r=np.arange(301), **kw)))
            worst = max(worst, opt)
            print(f"{strategy:8} {d:5g} {t:5g} {b:4g} {r_min:5g} {r:3d} {opt * 1e3:7.3f} "
                  f"{bf * 1e3:8.3f} {opt / bf:9.2f}")
    print(f"slowest optimal_r: {worst * 1e3:.3f} ms (target <= 10 ms: "
          f"{'met' if worst <= 0.010 else 'MISSED'})")


if __name__ == "__main__":
    main()
