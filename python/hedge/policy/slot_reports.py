"""What a slot's AM holds of its reports at a scan, for the compiled scan gates (numba).

A ``SlotView`` keeps, per busy slot, its last two reports sent (``k`` and ``k - 1``) and
when the AM receives each; these helpers read them as ``SlotView.to_batch`` does, so a
gate compiled over the slot arrays sees exactly the ``ScanBatch`` its reference reads.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, inline="always")
def held_report(now, hw, start, k, p0, p1, r0):  # pragma: no cover - compiled
    """The report a slot's AM holds at ``now``, as ``SlotView.to_batch`` reads it: its
    progress and send time, report ``k`` once received (``r0 <= now``), else ``k - 1``."""
    if r0 <= now:
        return p0, start + k * hw
    return p1, start + (k - 1) * hw


@njit(cache=True, inline="always")
def held_received(now, r0, r1):  # pragma: no cover - compiled
    """When the AM received the report it holds at ``now`` (``held_report``'s): ``r0``
    once that has passed, else ``r1`` (NaN before any report)."""
    return r0 if r0 <= now else r1


@njit(cache=True, inline="always")
def next_receipt(now, hw, start, k, r0):  # pragma: no cover - compiled
    """The earliest time a slot's AM could receive a report it does not hold at ``now``:
    report ``k`` at ``r0`` while on its way, else report ``k + 1`` no sooner than it is
    sent (its latency is drawn when it is sent, so not known before)."""
    return r0 if r0 > now else start + (k + 1) * hw


@njit(cache=True, inline="always")
def progress_at(tau, w, r, b, W):  # pragma: no cover - compiled
    """A slot's progress at ``tau`` on its trajectory, work ``w`` done by ``b``, at rate
    ``r`` since, out of ``W``: ``min((w + r max(tau - b, 0)) / W, 1)`` with numpy's NaN and
    -0.0 semantics (the simulator's reports, ``hedge.sim.kernels.heartbeats``)."""
    x = tau - b
    if x < 0.0:
        x = 0.0
    p = (w + r * x) / W
    if p > 1.0:
        p = 1.0
    return p


@njit(cache=True, inline="always")
def trajectory_progress(sent, w, r, W, ws, tw):  # pragma: no cover - compiled
    """The progress of a report a slot sends at ``sent`` while its rate holds
    (``SlotView.w``, ``r``, ``W``, ``ws``, ``tw``): ``progress_at`` from ``b = max(ws,
    tw)``, as ``hedge.sim.kernels.heartbeats`` will record it."""
    b = ws if ws >= tw or math.isnan(ws) else tw  # np.maximum
    return progress_at(sent, w, r, b, W)


@njit(cache=True, inline="always")
def trajectory_end(w, r, W, ws, tw):  # pragma: no cover - compiled
    """When a slot's work ends while its rate holds, a hair late (as the slot's own end,
    give or take rounding): no report is sent after it."""
    b = ws if ws >= tw or math.isnan(ws) else tw
    finish = b + (W - w) / r
    return finish + 1e-9 * (1.0 + abs(finish))
