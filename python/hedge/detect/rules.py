"""Straggler rules on plain arrays.

Each rule takes values per task along the last axis (any leading batch axes, e.g.
repetitions x tasks in the detection study) plus two masks:

- ``known``: the tasks that enter the job-wide mean (at least one received heartbeat);
- ``candidates``: the tasks that may be flagged (known and not yet reported finished).

NaN values (no estimate possible) never enter a mean and are never flagged.
"""

from __future__ import annotations

import numpy as np

from hedge.errors import HedgeError

Array = np.ndarray


def masked_mean(values: Array, mask: Array) -> Array:
    """Mean over the last axis of the finite values selected by ``mask`` (NaN if none)."""
    use = mask & np.isfinite(values)
    count = use.sum(axis=-1)
    total = np.where(use, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / np.where(count > 0, count, np.nan)


def score_rule(progress: Array, known: Array, candidates: Array, gap: float = 0.2) -> Array:
    """Score-based (Hadoop MRv1, Google MapReduce): ``PS_i <= mean PS - gap``."""
    limit = masked_mean(progress, known)[..., None] - gap
    with np.errstate(invalid="ignore"):
        return candidates & (progress <= limit)


def ratio_rule(values: Array, known: Array, candidates: Array, factor: float,
               strict: bool = False) -> Array:
    """``value_i >= factor * mean value`` (``>`` when ``strict``).

    Rate-based detection uses it on expected task durations (LATE, factor 1.2), the static
    and adaptive rules on estimated completion times (``>``, factor 1.5 or Th).
    """
    limit = np.asarray(factor)[..., None] * masked_mean(values, known)[..., None]
    with np.errstate(invalid="ignore"):
        above = values > limit if strict else values >= limit
    return candidates & above


def hadoop_rule(runtime: Array, completed: Array, candidates: Array, k: float = 1.0) -> Array:
    """Hadoop's default: estimated run time > mean + k * std of completed run times.

    ``completed`` holds the run times of successfully completed attempts (1-D); with none,
    nothing is flagged.
    """
    completed = np.asarray(completed, dtype=float)
    if len(completed) == 0:
        return np.zeros(np.shape(runtime), dtype=bool)
    limit = completed.mean() + k * completed.std()
    with np.errstate(invalid="ignore"):
        return candidates & (runtime > limit)


def _fraction_array(name: str, values: object) -> Array:
    array = np.asarray(values, dtype=float).ravel()
    bad = ~np.isnan(array) & ((array < 0) | (array > 1))
    if bad.any():
        raise HedgeError(
            f"adaptive threshold: '{name}' = {float(array[bad][0])!r}, expected fractions in [0, 1]"
        )
    return array


def adaptive_threshold(
    ects: object,
    progress: object,
    cpu_util: object,
    mem_util: object,
    qos: float | None = None,
    alpha: float = 0.5,
    beta: float = 0.5,
    mu: float = 0.5,
    phi: float = 0.6,
    omega: float = 0.6,
) -> float:
    """The dynamic straggler threshold ``Th = Q + alpha * P + beta * R``.

    ``ects``: estimated completion time per task, on the same clock origin as ``qos``
    (hedge uses seconds since the job started; NaN entries are ignored). ``progress``:
    progress per task. ``cpu_util``/``mem_util``: utilisation per node, fractions.

    - Q (QoS baseline): without ``qos``, 1.5. With it: ``qos / mean ECT`` if
      ``qos >= max ECT``, else ``(smallest ECT strictly greater than qos) / mean ECT``.
    - P (progress adjustor) ``= mean progress - mu``: low early (copies are cheap and
      useful), high late in the job.
    - R (resource adjustor) ``= max(mean mem - omega, mean cpu - phi)``; 0 when the
      utilisations are unknown (empty). A busy cluster gets fewer copies.

    A task is a straggler when its ECT exceeds ``Th * mean ECT``.
    """
    ects_a = np.asarray(ects, dtype=float).ravel()
    ects_a = ects_a[np.isfinite(ects_a)]
    progress_a = _fraction_array("progress", progress)
    cpu, mem = _fraction_array("cpu_util", cpu_util), _fraction_array("mem_util", mem_util)
    if len(ects_a) == 0:
        raise HedgeError("adaptive threshold: no finite ECT to compare against")
    mean_ect = ects_a.mean()
    if qos is None:
        q = 1.5
    elif qos >= ects_a.max():
        q = qos / mean_ect
    else:
        q = ects_a[ects_a > qos].min() / mean_ect
    p = float(np.nanmean(progress_a)) - mu if len(progress_a) else 0.0
    terms = [float(np.nanmean(u)) - s for u, s in ((mem, omega), (cpu, phi)) if len(u)]
    r = max(terms) if terms else 0.0
    return float(q + alpha * p + beta * r)
