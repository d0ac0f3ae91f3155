"""Heterogeneity-aware copy allocation: skyline slot choice and opportunistic rescheduling.

Given stragglers S (most critical first) and the slots V that free up in the coming window,
give each straggler the free slot with the best (time saved, energy saved) pair, as modelled
in :mod:`hedge.analysis.copy_model`:

1. **Skyline choice.** M1 = (Δt1, ΔE1) beats M2 iff Δt1 > Δt2 and ΔE1 > ΔE2. Starting from
   (0, 0), a slot qualifies only if it beats (0, 0): the copy must save time *and* energy.
   Among the qualifying free slots we take the one maximising Δt + ΔE / P_k (the energy
   saved counted in seconds of the straggler's slot power, so both axes weigh alike). That
   sum strictly increases along both axes, so no slot beats the one chosen: it is a point
   of the skyline.
2. **Opportunistic rescheduling.** A straggler S_i left without a slot may take the slot V_k
   of an already placed, more critical S_j if that is better for it than for S_j:
   ``score_j = (ct_j - ct_i)/ct_j + (Δt_ik - Δt_jk)/Δt_jk + (ΔE_ik - ΔE_jk)/ΔE_jk``
   (ct: criticalness). Candidates need positive time and energy terms; the top k (3) by
   score are tried in order: S_i gets V_k and S_j looks for a new free slot (step 1). The
   first candidate for which S_j finds one is adopted; otherwise S_i gets no copy.

Cost: the (Δt, ΔE) rows of all stragglers against all slots, O(|S|·|V|), computed in blocks
of stragglers by one compiled pass per block (numba; the numpy formulas are kept as the
reference it is tested against); rescheduling adds at most k rows per straggler
left without a slot. Stragglers beyond the first |V| can only be placed by rescheduling,
which is the O(|V|·min(|S|, |V|)) of the design plus k rows each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from hedge.analysis.copy_model import energy_saved, time_saved

# stragglers per vectorised block: a block's matrices (rows x |V|) stay in cache
BLOCK = 8


@dataclass
class AllocationProblem:
    """Stragglers (rows, ordered most critical first) and candidate slots (columns).

    Per straggler: ``criticalness`` (> 0), ``end`` = t_Si + t_Vk (its estimated end),
    ``straggler_power`` = P_k (its slot's power), ``remote_penalty`` = D_Ci / B (extra run
    time of a remote copy where the slot's last task was local; 0 if unknown).
    Per slot: ``slot_start`` = t_Vj (when it is free), ``slot_power`` = P_j,
    ``base_runtime`` = t_Th (run time of the latest non-straggling task on it), ``last_local``
    (T_h read local data), ``local_saving`` = D_Th / B (what a local copy saves where T_h
    was remote). Locality of copies (CSR): the slots where straggler i's input is local are
    ``local_slot[local_ptr[i]:local_ptr[i+1]]``; None means no copy is known to be local.
    ``straggler_node`` / ``slot_node`` (optional, both or neither): a copy never runs on
    its straggler's node (its run time there is taken as infinite).
    Times may use any origin (the scan time keeps the float32 fast path precise).
    """

    criticalness: np.ndarray
    end: np.ndarray
    straggler_power: np.ndarray
    remote_penalty: np.ndarray
    slot_start: np.ndarray
    slot_power: np.ndarray
    base_runtime: np.ndarray
    last_local: np.ndarray
    local_saving: np.ndarray
    local_ptr: np.ndarray | None = None
    local_slot: np.ndarray | None = None
    straggler_node: np.ndarray | None = None
    slot_node: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("criticalness", "end", "straggler_power", "remote_penalty", "slot_start",
                     "slot_power", "base_runtime", "local_saving"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.float64))
        self.last_local = np.asarray(self.last_local, dtype=bool)
        if self.local_ptr is None or self.local_slot is None:
            self.local_ptr = np.zeros(self.n_stragglers + 1, dtype=np.int64)
            self.local_slot = np.empty(0, dtype=np.int64)
        self.local_ptr = np.asarray(self.local_ptr, dtype=np.int64)
        self.local_slot = np.asarray(self.local_slot, dtype=np.int64)
        # sorted keys row * |V| + slot of the local pairs, for membership tests of pairs
        rows = np.repeat(np.arange(self.n_stragglers), np.diff(self.local_ptr))
        self._local_keys = np.sort(rows * self.n_slots + self.local_slot)
        # run time of a local copy on each slot (T_h remote: it paid D_Th/B a local copy won't)
        self.local_runtime = np.maximum(
            self.base_runtime - np.where(self.last_local, 0.0, self.local_saving), 0.0
        )

    @property
    def n_stragglers(self) -> int:
        return len(self.end)

    @property
    def n_slots(self) -> int:
        return len(self.slot_start)

    def _local_pairs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in ``rows``, slot) of every pair where the copy's input is local."""
        counts = self.local_ptr[rows + 1] - self.local_ptr[rows]
        r = np.repeat(np.arange(len(rows)), counts)
        return r, self.local_slot[concat_ranges(self.local_ptr[rows], counts)]

    def copy_runtime(self, rows: np.ndarray) -> np.ndarray:
        """t_Ci of the given stragglers on every slot, shape (len(rows), |V|)
        (:func:`hedge.analysis.copy_model.copy_runtime`'s three cases)."""
        tc = self.base_runtime + np.multiply.outer(
            self.remote_penalty[rows], self.last_local.astype(np.float64)
        )
        r, cols = self._local_pairs(rows)
        tc[r, cols] = self.local_runtime[cols]
        if self.straggler_node is not None:
            np.copyto(tc, np.inf, where=np.equal.outer(self.straggler_node[rows], self.slot_node))
        return tc

    def metrics(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Δt, ΔE) matrices of the given stragglers against every slot (float64)."""
        tc = self.copy_runtime(rows)
        dt = time_saved(self.end[rows, None], 0.0, tc, self.slot_start)
        de = energy_saved(self.straggler_power[rows, None], self.slot_power, dt, tc)
        return dt, de

    def pair_metrics(self, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Δt, ΔE) of the pairs (rows[m], cols[m]) only (float64)."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        keys = rows * self.n_slots + cols
        pos = np.minimum(np.searchsorted(self._local_keys, keys), len(self._local_keys) - 1)
        local = (self._local_keys[pos] == keys) if len(self._local_keys) else np.zeros(
            len(keys), dtype=bool)
        remote = self.base_runtime[cols] + self.remote_penalty[rows] * self.last_local[cols]
        tc = np.where(local, self.local_runtime[cols], remote)
        if self.straggler_node is not None:
            tc = np.where(self.straggler_node[rows] == self.slot_node[cols], np.inf, tc)
        dt = time_saved(self.end[rows], 0.0, tc, self.slot_start[cols])
        return dt, energy_saved(self.straggler_power[rows], self.slot_power[cols], dt, tc)


def concat_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + c) for each (s, c), vectorised (also used by
    hedge.policy.window)."""
    ends = np.cumsum(counts)
    offsets = np.repeat(starts - (ends - counts), counts)
    return offsets + np.arange(int(ends[-1]) if len(ends) else 0)


def skyline_scores(dt: np.ndarray, de: np.ndarray, straggler_power: np.ndarray) -> np.ndarray:
    """Per slot ``Δt + ΔE / P_k`` where (Δt, ΔE) beats (0, 0), else -inf.

    ``straggler_power`` (P_k) broadcasts against the rows. ΔE / P_k is the energy saved,
    in seconds of the straggler's own slot power, so time and energy weigh alike; the sum
    grows along both axes, so a row's argmax is a skyline point (no slot beats it)."""
    ok = (dt > 0) & (de > 0)
    return np.where(ok, dt + de / straggler_power, -np.inf)


class _BlockScorer:
    """:func:`skyline_scores` of blocks of rows, in float32 into reused buffers.

    Same formulas as :meth:`AllocationProblem.metrics`; times are shifted to the earliest
    slot start so float32 keeps sub-millisecond precision. Preallocated buffers avoid a
    fresh (page-faulting) allocation per operation."""

    def __init__(self, problem: AllocationProblem, block: int) -> None:
        p = problem
        self.p = p
        origin = float(p.slot_start.min()) if p.n_slots else 0.0
        f32 = np.float32
        self.end = (p.end - origin).astype(f32)
        self.pk = p.straggler_power.astype(f32)
        self.pen = p.remote_penalty.astype(f32)
        self.start = (p.slot_start - origin).astype(f32)
        self.pj = p.slot_power.astype(f32)
        self.base = p.base_runtime.astype(f32)
        self.thl = p.last_local.astype(f32)
        self.local_rt = p.local_runtime.astype(f32)
        self.same_node = p.straggler_node is not None
        shape = (block, p.n_slots)
        self.tc, self.dt, self.de, self.score = (np.empty(shape, f32) for _ in range(4))
        self.bad = np.empty(shape, bool)

    def scores(
        self, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(score, Δt, ΔE, fails) matrices (len(rows), |V|), valid until the next call;
        ``fails``: the slot does not beat (0, 0) for the row's straggler, free or not."""
        n = len(rows)
        tc, dt, de, score, bad = (
            a[:n] for a in (self.tc, self.dt, self.de, self.score, self.bad)
        )
        np.multiply.outer(self.pen[rows], self.thl, out=tc)
        tc += self.base
        r, cols = self.p._local_pairs(rows)
        tc[r, cols] = self.local_rt[cols]
        if self.same_node:
            np.equal.outer(self.p.straggler_node[rows], self.p.slot_node, out=bad)
            np.copyto(tc, np.inf, where=bad)
        np.subtract.outer(self.end[rows], self.start, out=dt)
        dt -= tc  # Δt = end - (t_Vj + t_C)
        np.multiply(tc, self.pj, out=de)
        np.multiply(dt, self.pk[rows, None], out=tc)  # tc is free from here on
        np.subtract(tc, de, out=de)  # ΔE = P_k Δt - P_j t_C
        np.minimum(dt, de, out=tc)
        np.less_equal(tc, 0, out=bad)  # does not beat (0, 0)
        np.multiply(de, (1.0 / self.pk[rows])[:, None], out=score)
        score += dt
        np.copyto(score, -np.inf, where=bad)
        return score, dt, de, bad

    def compiled_scores(
        self, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`scores` in one compiled pass (bit-identical float32 arithmetic, same
        operation order): the dozen numpy passes over the block were most of
        :func:`allocate`'s time."""
        n = len(rows)
        tc, dt, de, score, bad = (
            a[:n] for a in (self.tc, self.dt, self.de, self.score, self.bad)
        )
        r, cols = self.p._local_pairs(rows)
        node = self.p.straggler_node[rows] if self.same_node else _NO_NODES
        slot_node = self.p.slot_node if self.same_node else _NO_NODES
        _score_block(self.end[rows], self.pk[rows], self.pen[rows], self.thl, self.base,
                     self.start, self.pj, self.local_rt, r, cols, self.same_node, node,
                     slot_node, tc, dt, de, score, bad)
        return score, dt, de, bad


_NO_NODES = np.empty(0, dtype=np.int64)


@njit(cache=True)
def _score_block(end, pk, pen, thl, base, start, pj, local_rt, local_r, local_c,
                 same_node, node, slot_node, tc, dt, de, score, bad):  # pragma: no cover
    """The float32 formulas of :meth:`_BlockScorer.scores`, row by row in one pass."""
    n, m = tc.shape
    for i in range(n):
        for j in range(m):
            tc[i, j] = pen[i] * thl[j] + base[j]
    for q in range(len(local_r)):
        tc[local_r[q], local_c[q]] = local_rt[local_c[q]]
    inf = np.float32(np.inf)
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for i in range(n):
        inv = one / pk[i]
        for j in range(m):
            t = tc[i, j]
            if same_node and node[i] == slot_node[j]:
                t = inf
            d = (end[i] - start[j]) - t
            e = d * pk[i] - t * pj[j]
            dt[i, j] = d
            de[i, j] = e
            lo = d if (d < e or d != d) else e  # np.minimum: NaN propagates
            fail = lo <= zero
            bad[i, j] = fail
            score[i, j] = -inf if fail else e * inv + d


@dataclass
class Allocation:
    """Result per straggler (problem order): chosen slot (-1: no copy) and its (Δt, ΔE)."""

    slot: np.ndarray
    dt: np.ndarray
    de: np.ndarray
    rescheduled: int = 0

    @property
    def placed(self) -> np.ndarray:
        return self.slot >= 0


def allocate(
    problem: AllocationProblem, reschedule: bool = True, top_k: int = 3, block: int = BLOCK
) -> Allocation:
    """Greedy allocation in criticalness order (skyline choice + rescheduling, see module)."""
    n = problem.n_stragglers
    slot = np.full(n, -1, dtype=np.int64)
    dts, des = np.zeros(n), np.zeros(n)
    if n == 0 or problem.n_slots == 0:
        return Allocation(slot=slot, dt=dts, de=des)
    free = np.ones(problem.n_slots, dtype=bool)
    n_free = problem.n_slots
    swaps = 0
    scorer = _BlockScorer(problem, min(block, n))
    for lo in range(0, n, block):
        if n_free == 0 and not reschedule:
            break
        rows = np.arange(lo, min(lo + block, n))
        score, dt, de, fails = scorer.compiled_scores(rows)
        np.copyto(score, -np.inf, where=~free)
        for r, i in enumerate(rows.tolist()):
            row = score[r]
            j = int(row.argmax()) if n_free else -1
            if j >= 0 and row[j] > -np.inf:
                slot[i], dts[i], des[i] = j, dt[r, j], de[r, j]
            elif reschedule and i > 0:
                j = _reschedule(problem, i, (dt[r], de[r], ~fails[r]), slot, dts, des,
                                free, top_k)
                if j < 0:
                    continue
                swaps += 1
            else:
                continue
            free[j] = False
            n_free -= 1
            score[:, j] = -np.inf
    placed = np.flatnonzero(slot >= 0)  # exact float64 figures for the result
    dts[placed], des[placed] = problem.pair_metrics(placed, slot[placed])
    return Allocation(slot=slot, dt=dts, de=des, rescheduled=swaps)


def _reschedule(
    problem: AllocationProblem,
    i: int,
    row: tuple[np.ndarray, np.ndarray, np.ndarray],
    slot: np.ndarray,
    dts: np.ndarray,
    des: np.ndarray,
    free: np.ndarray,
    top_k: int,
) -> int:
    """Try to give S_i the slot of a placed S_j (step 2); return the slot S_j moved to, or
    -1. ``row`` = S_i's (Δt, ΔE, qualifies) over all slots. Updates ``slot``, ``dts``,
    ``des`` in place on success (not ``free``).

    Only slots that beat (0, 0) for S_i can have positive time and energy terms (they
    exceed S_j's positive Δt and ΔE there), so the others are dropped first."""
    dt_i, de_i, qualifies = row
    placed = np.flatnonzero(slot[:i] >= 0)
    placed = placed[qualifies[slot[placed]]]
    if len(placed) == 0:
        return -1
    k_slots = slot[placed]
    dt_ik, de_ik = dt_i[k_slots], de_i[k_slots]
    time_term = (dt_ik - dts[placed]) / dts[placed]
    energy_term = (de_ik - des[placed]) / des[placed]
    keep = (time_term > 0) & (energy_term > 0)
    if not keep.any():
        return -1
    ct = problem.criticalness
    score = (ct[placed] - ct[i]) / ct[placed] + time_term + energy_term
    cand = np.flatnonzero(keep)
    cand = cand[np.argsort(-score[cand], kind="stable")[:top_k]]
    for c in cand:
        j, k = int(placed[c]), int(k_slots[c])
        dt_j, de_j = problem.metrics(np.array([j]))
        new_row = skyline_scores(dt_j, de_j, problem.straggler_power[j])[0]
        new_row[~free] = -np.inf
        new_row[k] = -np.inf
        new = int(np.argmax(new_row))
        if new_row[new] == -np.inf:
            continue
        slot[i], dts[i], des[i] = k, dt_ik[c], de_ik[c]
        slot[j], dts[j], des[j] = new, dt_j[0, new], de_j[0, new]
        return new
    return -1
