"""Heartbeats computed arithmetically, and what the AM has received of them.

Attempt ``a`` launched at ``start`` sends report ``k`` at ``start + k * hw`` (k = 0, 1, ...)
carrying its progress at that instant; report ``k`` arrives after a latency
``L(a, k)`` drawn from the cluster's latency distribution (a seeded table indexed by a hash
of ``(a, k)``), so no heartbeat is ever stored as an event and the same seed gives the same
latencies. Latencies are clipped below ``hw``: reports arrive in order, so at scan time
the AM holds report ``k`` if it has arrived, else report ``k - 1``.
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def hash_uniform(seed: int, attempt: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Uniforms in [0, 1) from splitmix64 of (seed, attempt, k); vectorised, deterministic."""
    with np.errstate(over="ignore"):
        x = (np.asarray(attempt, dtype=np.uint64) * _GOLDEN) ^ (
            # seeds are any integer >= 0 (numpy's generators take them); the hash their
            # low 64 bits (np.uint64 overflowed on larger ones)
            np.asarray(k, dtype=np.int64).astype(np.uint64) + np.uint64(seed % 2**64) * _M2
        )
        x = x + _GOLDEN
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


class Latency:
    """Heartbeat latency ``L(a, k)`` in seconds, clipped to ``[0, 0.999 * hw]``.

    Latencies come from a seeded table of ``TABLE`` draws indexed by a hash of
    ``(a, k)``: three integer operations per report instead of a full splitmix64.
    """

    TABLE = 1 << 16

    def __init__(self, sampler, hw: float, seed: int) -> None:
        u = hash_uniform(seed, np.arange(self.TABLE), np.zeros(self.TABLE, dtype=np.int64))
        self._table = np.clip(sampler(u), 0.0, 0.999 * hw)

    @property
    def table(self) -> np.ndarray:
        """The latency draws, indexed by ``(attempt * 40503 + k * 9973) mod TABLE``."""
        return self._table

    def __call__(self, attempt: np.ndarray, k: np.ndarray) -> np.ndarray:
        index = (attempt * 40503 + k * 9973) & (self.TABLE - 1)
        return self._table[index]


def last_received(
    now: float,
    start: np.ndarray,
    k: np.ndarray,
    p_k: np.ndarray,
    p_prev: np.ndarray,
    recv_k: np.ndarray,
    recv_prev: np.ndarray,
    hw: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The AM's view at ``now`` of attempts whose latest *sent* report is ``k``.

    ``p_k`` / ``p_prev``: progress carried by reports ``k`` and ``k - 1``; ``recv_k`` /
    ``recv_prev``: when they arrive (send time + ``L(a, k)``). Returns ``(index, progress,
    sent, received)`` of the last received report (index -1, progress 0 and NaN times when
    none has arrived yet).
    """
    ok = recv_k <= now
    index = np.where(ok, k, k - 1)
    sent = start + index * hw
    recv = np.where(ok, recv_k, recv_prev)
    progress = np.where(ok, p_k, p_prev)
    none = index < 0
    if none.any():
        sent[none] = np.nan
        recv[none] = np.nan
        progress[none] = 0.0
    return index, progress, sent, recv


def heartbeats_numpy(live, t: float, step: float, ended: np.ndarray, hw: float, eps: float,
                     kfp: int, latency: Latency) -> None:
    """Numpy reference of ``hedge.sim.kernels.heartbeats`` (same semantics, same results
    bit for bit): record in ``live`` (the slot arrays, ``hedge.sim.slots.Live``) the reports
    sent in ``(t - step, t]`` by attempts still running (not in ``ended``); ``eps``: the
    grid tolerance (``hedge.sim.grid.EPS``)."""
    rows = np.flatnonzero(live.nhb <= t + eps)
    if len(ended) and len(rows):
        rows = rows[live.end[rows] > t + eps]
    if not len(rows):
        return
    start = live.start[rows]
    k_old = live.k[rows]
    k_new = np.floor((t - start) / hw + eps).astype(np.int64)
    w, r, W = live.w[rows], live.r[rows], live.W[rows]
    b = np.maximum(live.ws[rows], live.tw[rows])

    def progress_at(tau: np.ndarray, sel: slice | np.ndarray = slice(None)) -> np.ndarray:
        done = w[sel] + r[sel] * np.maximum(tau - b[sel], 0.0)
        return np.minimum(done / W[sel], 1.0)

    sent = start + k_new * hw
    p_new = progress_at(sent)
    r_new = sent + latency(live.aid[rows], k_new)
    # the report before the newest: the old newest one, unless the step sent several
    p_prev, r_prev = live.p0[rows], live.r0[rows]
    # every attempt's next report is due after t - step, so a step sends two or more
    # reports of one attempt only when it is longer than hw
    again = np.flatnonzero(k_new - 1 > k_old) if step > 0.5 * hw else ()
    if len(again):
        p_prev[again] = progress_at(sent[again] - hw, again)
        r_prev[again] = sent[again] - hw + latency(live.aid[rows[again]], k_new[again] - 1)
    crossed = np.flatnonzero((k_old < kfp) & (k_new >= kfp))
    if len(crossed):
        live.fpp[rows[crossed]] = progress_at(start[crossed] + kfp * hw, crossed)
    live.k[rows], live.p0[rows], live.p1[rows] = k_new, p_new, p_prev
    live.r0[rows], live.r1[rows] = r_new, r_prev
    live.nhb[rows] = sent + hw
