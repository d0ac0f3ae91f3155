"""Compiled per-step kernels of the simulator (numba, no fastmath).

A step of the simulator touches a few thousand slots; done as numpy expressions it is a
few dozen small calls (~1 us each), so the call count, not the rows, sets its cost. These
kernels do the same work in one compiled call per step.

They must give *bit-identical* results to the numpy code they replace (that code decides
what the AM sees): every value is computed with the same floating-point operations in the
same order (``max(x, 0)`` and ``min(x, 1)`` as numpy's ``maximum``/``minimum`` do them,
including NaN and -0.0), and no fastmath, so LLVM neither contracts ``a + b * c`` into
an FMA nor reorders sums. Tests compare whole result tables with the numpy path
(``hedge.sim.heartbeat.heartbeats_numpy``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hedge.policy.slot_reports import progress_at


@njit(cache=True, inline="always")
def _change_rate(s: int, t: float, rate: float, tw: np.ndarray, ws: np.ndarray,
                 w: np.ndarray, r: np.ndarray, W: np.ndarray, end: np.ndarray) -> None:
    """Slot ``s`` goes to ``rate`` at ``t``: it banks its work ``w += r max(t - b, 0)``
    (``b = max(tw, ws)``), restarts its clock (``tw = t``) and gets ``end = max(b, t) +
    (W - w) / rate`` (numpy's NaN semantics, as ``update_rates``' numpy code)."""
    b = tw[s] if tw[s] >= ws[s] or math.isnan(tw[s]) else ws[s]  # np.maximum(tw, ws)
    x = t - b
    if x < 0.0:
        x = 0.0
    w[s] += r[s] * x
    tw[s] = t
    r[s] = rate
    e = b if b >= t or math.isnan(b) else t  # np.maximum(b, t)
    end[s] = e + (W[s] - w[s]) / rate


@njit(cache=True)
def heartbeats(t: float, step: float, hw: float, eps: float, kfp: int, table: np.ndarray,
               nhb: np.ndarray, end: np.ndarray, start: np.ndarray, aid: np.ndarray,
               ws: np.ndarray, tw: np.ndarray, w: np.ndarray, r: np.ndarray, W: np.ndarray,
               k: np.ndarray, p0: np.ndarray, p1: np.ndarray, r0: np.ndarray, r1: np.ndarray,
               fpp: np.ndarray) -> None:
    """Record, in place, the reports sent in ``(t - step, t]`` by attempts still running.

    A slot reports when its next heartbeat is due (``nhb <= t + eps``) and its work has
    not ended (``end > t + eps``). Its newest report index is
    ``k' = floor((t - start) / hw + eps)``, sent at ``s = start + k' hw`` with progress
    ``min((w + r max(s - b, 0)) / W, 1)``, ``b = max(ws, tw)``, received at
    ``s + L(aid, k')`` with ``L`` the latency table at ``(aid 40503 + k 9973) mod size``.
    The report before it is the old newest one, or, when the step is longer than
    ``hw / 2`` and sent two or more reports, report ``k' - 1`` computed the same way.
    Crossing ``kfp`` (the first report with progress) records that report's progress.
    """
    none = np.empty(0, np.int64)
    _heartbeats_where(t, step > 0.5 * hw, hw, eps, kfp, table, 0, np.empty(0, np.bool_),
                      none, np.empty(0), np.empty(0), none, nhb, end, start, aid, ws, tw, w,
                      r, W, k, p0, p1, r0, r1, fpp)


@njit(cache=True)
def _heartbeats_where(t, several, hw, eps, kfp, table, mode, want, job, factor, slot_speed,
                      slot_node, nhb, end, start, aid, ws, tw, w, r, W, k, p0, p1, r0, r1,
                      fpp):  # pragma: no cover - compiled
    """``heartbeats``' loop (one body for its three uses; a per-slot function call would
    cost more than the work, as it passes the arrays): ``mode`` 0 every slot, 1 the slots
    of jobs marked in ``want`` (index ``job + 1``), 2 the slots whose rate changes
    (``speed / factor[node] != r``, as ``update_rates`` tests it): their reports so far,
    on the old rate, then ``update_rates``' own work on them, and their jobs marked in
    ``want``."""
    mask = len(table) - 1
    limit = t + eps
    first_at = kfp * hw
    for s in range(len(nhb)):
        rate = 0.0
        if mode == 2:
            rate = slot_speed[s] / factor[slot_node[s]]
            if rate == r[s]:  # unchanged (NaN counts as changed, as numpy's !=)
                continue
        if nhb[s] <= limit and end[s] > limit and (mode != 1 or want[job[s] + 1]):
            st = start[s]
            k_old = k[s]
            k_new = np.int64(math.floor((t - st) / hw + eps))
            b = ws[s] if ws[s] >= tw[s] or math.isnan(ws[s]) else tw[s]  # np.maximum
            sent = st + k_new * hw
            p_new = progress_at(sent, w[s], r[s], b, W[s])
            r_new = sent + table[(aid[s] * 40503 + k_new * 9973) & mask]
            p_prev, r_prev = p0[s], r0[s]
            if several and k_new - 1 > k_old:
                p_prev = progress_at(sent - hw, w[s], r[s], b, W[s])
                r_prev = sent - hw + table[(aid[s] * 40503 + (k_new - 1) * 9973) & mask]
            if k_old < kfp and k_new >= kfp:
                fpp[s] = progress_at(st + first_at, w[s], r[s], b, W[s])
            k[s] = k_new
            p0[s] = p_new
            p1[s] = p_prev
            r0[s] = r_new
            r1[s] = r_prev
            nhb[s] = sent + hw
        if mode == 2:  # update_rates' body, after the reports sent on the old rate
            want[job[s] + 1] = True
            _change_rate(s, t, rate, tw, ws, w, r, W, end)


@njit(cache=True)
def heartbeats_of(t: float, hw: float, eps: float, kfp: int, table: np.ndarray,
                  want: np.ndarray, job: np.ndarray, nhb: np.ndarray, end: np.ndarray,
                  start: np.ndarray, aid: np.ndarray, ws: np.ndarray, tw: np.ndarray,
                  w: np.ndarray, r: np.ndarray, W: np.ndarray, k: np.ndarray,
                  p0: np.ndarray, p1: np.ndarray, r0: np.ndarray, r1: np.ndarray,
                  fpp: np.ndarray) -> None:
    """``heartbeats`` on the slots of the jobs marked in ``want`` (index ``job + 1``) only,
    as if every step since a slot was last brought up to date had been long (``step =
    inf``).

    Bit-identical to calling ``heartbeats`` at every visited step, provided each slot is
    brought up to date before its rate changes (``heartbeats_and_rates``) and before
    anything reads its reports: report ``k - 1`` is then recomputed only when it was sent
    since, on the trajectory it was sent on, with the operations ``heartbeats`` uses."""
    none = np.empty(0, np.int64)
    _heartbeats_where(t, True, hw, eps, kfp, table, 1, want, job, np.empty(0), np.empty(0),
                      none, nhb, end, start, aid, ws, tw, w, r, W, k, p0, p1, r0, r1, fpp)


@njit(cache=True)
def heartbeats_and_rates(t: float, hw: float, eps: float, kfp: int, table: np.ndarray,
                         degr: np.ndarray, stretch: np.ndarray, busy_n: np.ndarray,
                         slot_speed: np.ndarray, slot_node: np.ndarray, rated: np.ndarray,
                         job: np.ndarray, nhb: np.ndarray, end: np.ndarray,
                         start: np.ndarray, aid: np.ndarray, ws: np.ndarray, tw: np.ndarray,
                         w: np.ndarray, r: np.ndarray, W: np.ndarray, k: np.ndarray,
                         p0: np.ndarray, p1: np.ndarray, r0: np.ndarray, r1: np.ndarray,
                         fpp: np.ndarray) -> None:
    """``update_rates`` in one pass with ``heartbeats_of`` on the slots whose rate it
    changes (its own test, ``rate != r``), so their reports so far are recorded on the old
    rate first; marks those slots' jobs in ``rated`` (index ``job + 1``). Bit-identical to
    ``heartbeats_of`` on those slots, then ``update_rates``: a slot's reports read only
    its own fields, and neither the loads nor the degradation change in between."""
    factor = np.empty(len(busy_n))
    for i in range(len(busy_n)):
        factor[i] = degr[i] * stretch[busy_n[i]]
    _heartbeats_where(t, True, hw, eps, kfp, table, 2, rated, job, factor, slot_speed,
                      slot_node, nhb, end, start, aid, ws, tw, w, r, W, k, p0, p1, r0, r1,
                      fpp)


@njit(cache=True)
def complete(t: float, win_rows: np.ndarray, win_task: np.ndarray, win_end: np.ndarray,
             gate: bool, idle_task: int, idle_start: float, done_state: int,
             killed_state: int,
             # per task
             t_done: np.ndarray, t_finish: np.ndarray, t_runtime: np.ndarray,
             t_job: np.ndarray, t_type: np.ndarray, t_att: np.ndarray, t_run: np.ndarray,
             # per attempt
             a_end: np.ndarray, a_state: np.ndarray,
             # per slot
             slot_busy: np.ndarray, slot_node: np.ndarray, busy_n: np.ndarray,
             aid: np.ndarray, task: np.ndarray, job: np.ndarray, start: np.ndarray,
             ws: np.ndarray, W: np.ndarray, w: np.ndarray, k: np.ndarray, nhb: np.ndarray,
             end: np.ndarray,
             # per job (per job x type for the run-time statistics)
             j_changed: np.ndarray, j_count: np.ndarray, j_sum: np.ndarray,
             j_sumsq: np.ndarray, j_mean: np.ndarray, j_std: np.ndarray,
             j_left: np.ndarray, j_last: np.ndarray, j_maps_left: np.ndarray,
             j_nred: np.ndarray, j_off: np.ndarray, j_nmaps: np.ndarray, j_end: np.ndarray,
             j_next: np.ndarray, j_finish: np.ndarray, j_wake: np.ndarray,
             j_next_scan: np.ndarray) -> tuple[int, int]:
    """Tasks ``win_task`` (ascending, distinct) are won by the attempts in slots
    ``win_rows`` ending at ``win_end``: ``hedge.sim.engine.Simulator._complete`` after its
    choice of winners, in one compiled call. Returns ``(change in waiting tasks, jobs finished,
    jobs whose reduces became runnable)``.

    In order, as the numpy code: mark the tasks done (finish, run time ``end - start``);
    every attempt of a done task is killed at its task's finish (the winners then DONE);
    their slots are released; per task in ``win_task`` order, the job's run-time sums
    (``count, sum, sum of squares``; then ``mean = sum / count``, ``std = sqrt(max(sumsq /
    count - mean^2, 0))``), tasks left, last end (``max``), maps left; jobs whose last map
    ended open their reduces; jobs with no task left finish at their last end; jobs
    waiting for a completion are due at ``t``.
    """
    n = len(win_rows)
    for i in range(n):
        tk = win_task[i]
        t_done[tk] = True
        t_finish[tk] = win_end[i]
        t_runtime[tk] = win_end[i] - start[win_rows[i]]
    n_slots = len(aid)
    gone = np.empty(n_slots, np.int64)
    n_gone = 0
    few = n <= 8  # compare with the few winners (sequential reads) rather than t_done
    for s in range(n_slots):
        tk = task[s]
        if few:
            hit = False
            for i in range(n):
                if tk == win_task[i]:
                    hit = True
                    break
        else:
            hit = t_done[tk]
        if hit:
            gone[n_gone] = s
            n_gone += 1
            a_end[aid[s]] = t_finish[tk]
            a_state[aid[s]] = killed_state
    for i in range(n):
        a_state[aid[win_rows[i]]] = done_state
    for g in range(n_gone):  # release the slots (a winner's among them: its job changed)
        s = gone[g]
        slot_busy[s] = False
        busy_n[slot_node[s]] -= 1
        t_att[task[s]] -= 1
        j_changed[job[s] + 1] = True
        if gate:
            t_run[task[s]] -= 1
        aid[s] = -1
        task[s] = idle_task
        job[s] = -1
        start[s] = idle_start
        ws[s] = idle_start
        W[s] = np.inf
        w[s] = 0.0
        k[s] = 0
        nhb[s] = np.inf
        end[s] = np.inf
    for i in range(n):
        tk = win_task[i]
        j = t_job[tk]
        if gate:
            c = j * 2 + t_type[tk]
            rt = t_runtime[tk]
            j_count[c] += 1.0
            j_sum[c] += rt
            j_sumsq[c] += rt * rt
        j_left[j] -= 1
        if not (j_last[j] >= win_end[i]) and not math.isnan(j_last[j]):  # np.maximum
            j_last[j] = win_end[i]
        if t_type[tk] == 0:
            j_maps_left[j] -= 1
    waiting = 0
    finished = 0
    phased = 0
    for i in range(n):
        tk = win_task[i]
        j = t_job[tk]
        if gate:
            c = j * 2 + t_type[tk]
            mean = j_sum[c] / j_count[c]
            j_mean[c] = mean
            var = j_sumsq[c] / j_count[c] - mean * mean
            if var < 0.0:  # np.maximum(var, 0.0)
                var = 0.0
            j_std[c] = math.sqrt(var)
        full = j_off[j] + j_nmaps[j] + j_nred[j]
        if t_type[tk] == 0 and j_maps_left[j] == 0 and j_nred[j] > 0 and j_end[j] != full:
            j_end[j] = full  # the reduces become runnable (once per job)
            waiting += j_nred[j]
            phased += 1
    for i in range(n):
        j = t_job[win_task[i]]
        if j_left[j] == 0 and math.isnan(j_finish[j]):
            waiting -= j_end[j] - j_next[j]
            j_finish[j] = j_last[j]
            finished += 1
    for i in range(n):
        j = t_job[win_task[i]]
        if j_wake[j] and not (j_next_scan[j] <= t) and not math.isnan(j_next_scan[j]):
            j_next_scan[j] = t  # np.minimum
    return waiting, finished, phased


@njit(cache=True)
def update_rates(t: float, degr: np.ndarray, stretch: np.ndarray, busy_n: np.ndarray,
                 slot_speed: np.ndarray, slot_node: np.ndarray, tw: np.ndarray,
                 ws: np.ndarray, w: np.ndarray, r: np.ndarray, W: np.ndarray,
                 end: np.ndarray) -> None:
    """``r = speed / (degradation * stretch(busy slots))`` per slot; a slot whose rate
    changes banks its work ``w += r max(t - b, 0)`` (``b = max(tw, ws)``), restarts its
    clock (``tw = t``) and gets ``end = max(b, t) + (W - w) / r``. In place, as the
    numpy code of ``hedge.sim.slots.Slots.update_rates``."""
    nodes = len(busy_n)
    factor = np.empty(nodes)
    for i in range(nodes):
        factor[i] = degr[i] * stretch[busy_n[i]]
    for s in range(len(slot_speed)):
        rate = slot_speed[s] / factor[slot_node[s]]
        if rate == r[s]:  # unchanged (NaN counts as changed, as numpy's !=)
            continue
        _change_rate(s, t, rate, tw, ws, w, r, W, end)


@njit(cache=True, error_model="numpy")
def room_gate(due_jobs, job, task, aid, t_run, a_copy, n_tasks, minimum, total_frac,
              running_frac, per_job):  # pragma: no cover - compiled
    """``AppMasters._with_room``'s test per due job: does Hadoop's cap leave room?

    Per busy slot: its job's running tasks grow by ``1 / t_run[task]`` (the task's running
    attempts; rounded, the distinct running tasks) and its running copies by one if
    ``a_copy``; a due job has room when its copies are below ``floor(max(minimum,
    total_frac n_tasks, running_frac running_tasks))``. ``per_job``: float scratch, 2 per
    job, zero on entry and left zeroed."""
    for s in range(len(job)):
        j = job[s]
        if j < 0:
            continue
        per_job[2 * j] += 1.0 / t_run[task[s]]
        if a_copy[aid[s]]:
            per_job[2 * j + 1] += 1.0
    room = np.zeros(len(due_jobs), np.bool_)
    for i in range(len(due_jobs)):
        j = due_jobs[i]
        allowed = math.floor(max(max(float(minimum), total_frac * n_tasks[i]),
                                 running_frac * np.rint(per_job[2 * j])))
        room[i] = per_job[2 * j + 1] < allowed
    for s in range(len(job)):
        j = job[s]
        if j >= 0:
            per_job[2 * j] = 0.0
            per_job[2 * j + 1] = 0.0
    return room


@njit(cache=True, error_model="numpy")
def slot_free_at(t: float, tick: float, hw: float, start: np.ndarray, k: np.ndarray,
                 p0: np.ndarray, aid: np.ndarray) -> np.ndarray:
    """``ClusterFacts.slot_free_at`` in one pass (``AppMasters._cluster_facts_numpy``'s
    expressions): a busy slot's ``max(start + k hw / p0, t + tick)`` with NaN -> inf and
    inf -> the largest float; an empty slot (``aid < 0``) ``t``."""
    out = np.empty(len(aid))
    soon = t + tick
    big = np.finfo(np.float64).max
    for s in range(len(aid)):
        if aid[s] < 0:
            out[s] = t
            continue
        x = start[s] + k[s] * hw / p0[s]
        if math.isnan(x):
            out[s] = math.inf
        elif x == math.inf:
            out[s] = big
        else:
            out[s] = x if x >= soon else soon  # np.maximum, x not NaN
    return out


@njit(cache=True)
def earliest(values: np.ndarray, at: np.ndarray) -> float:
    """``values[at].min()`` (inf when ``at`` is empty) without the gathered copy."""
    least = np.inf
    for i in at:
        if values[i] < least:
            least = values[i]
    return least


@njit(cache=True)
def settling(active: np.ndarray, anchor: np.ndarray, rated: np.ndarray, changed: np.ndarray,
             fresh: np.ndarray, any_fresh: bool, by_cap: np.ndarray,
             ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``AppMasters.settle``'s choice of the sleeping jobs to settle, in one pass.

    Of the active jobs asleep (``anchor`` not NaN): those that changed (``changed``, index
    job + 1, cleared for them), a slot of which changed rate (``rated``, index job + 1,
    all cleared) or that a gate skipped in this step (``fresh``, read and cleared for
    every sleeping job when ``any_fresh``). Returns the number of sleeping jobs, and per
    chosen job (in ``active``'s order): the job, changed?, skipped in this step?, asleep
    on the cap (``by_cap``)?"""
    n = len(active)
    jobs = np.empty(n, dtype=np.int64)
    was_changed = np.empty(n, dtype=np.bool_)
    was_fresh = np.empty(n, dtype=np.bool_)
    cap = np.empty(n, dtype=np.bool_)
    asleep = 0
    m = 0
    for i in range(n):
        j = active[i]
        if math.isnan(anchor[j]):
            continue
        asleep += 1
        c = changed[j + 1]
        f = False
        if any_fresh:
            f = fresh[j]
            fresh[j] = False
        if c or rated[j + 1] or f:
            jobs[m], was_changed[m], was_fresh[m], cap[m] = j, c, f, by_cap[j]
            changed[j + 1] = False
            m += 1
    rated[:] = False
    return asleep, jobs[:m], was_changed[:m], was_fresh[:m], cap[:m]


@njit(cache=True)
def running_columns(now: float, hw: float, rows: np.ndarray, start: np.ndarray,
                    k: np.ndarray, p0: np.ndarray, p1: np.ndarray, r0: np.ndarray,
                    r1: np.ndarray, kfp: np.ndarray, fpp: np.ndarray, frac0: np.ndarray,
                    task: np.ndarray, aid: np.ndarray, job: np.ndarray, j_off: np.ndarray,
                    t_type: np.ndarray, t_input: np.ndarray, slot_node: np.ndarray,
                    a_copy: np.ndarray) -> tuple:
    """``AppMasters._running_columns`` over ``_reports`` (``hedge.sim.heartbeat.
    last_received``) in one pass: per slot of ``rows``, the ``AttemptTable`` columns of its
    attempt as its AM holds them at ``now``, in the order ``(task, attempt, task_type,
    node, start, first_progress_time, first_progress, progress, report_sent,
    report_received, bytes_processed, input_bytes, speculative)`` (state is RUNNING)."""
    n = len(rows)
    c_task = np.empty(n, dtype=np.int64)
    c_aid = np.empty(n, dtype=np.int64)
    c_type = np.empty(n, dtype=np.int8)
    c_node = np.empty(n, dtype=np.int64)
    c_start = np.empty(n)
    c_fpt = np.empty(n)
    c_fpp = np.empty(n)
    c_prog = np.empty(n)
    c_sent = np.empty(n)
    c_recv = np.empty(n)
    c_bytes = np.empty(n)
    c_input = np.empty(n)
    c_copy = np.empty(n, dtype=np.bool_)
    for i in range(n):
        s = rows[i]
        tk = task[s]
        a = aid[s]
        st = start[s]
        if r0[s] <= now:  # last_received: report k arrived, else k - 1
            index, recv, prog = k[s], r0[s], p0[s]
        else:
            index, recv, prog = k[s] - 1, r1[s], p1[s]
        sent = st + index * hw
        if index < 0:
            sent, recv, prog = math.nan, math.nan, 0.0
        if kfp[s] <= index and index >= 0:
            c_fpt[i], c_fpp[i] = st + kfp[s] * hw, fpp[s]
        else:
            c_fpt[i], c_fpp[i] = math.nan, math.nan
        inp = np.float64(t_input[tk])
        c_task[i] = tk - j_off[job[s]]
        c_aid[i] = a
        c_type[i] = np.int8(t_type[tk])
        c_node[i] = slot_node[s]
        c_start[i] = st
        c_prog[i] = prog
        c_sent[i] = sent
        c_recv[i] = recv
        c_bytes[i] = prog * (1 - frac0[s]) * inp
        c_input[i] = inp
        c_copy[i] = a_copy[a]
    return (c_task, c_aid, c_type, c_node, c_start, c_fpt, c_fpp, c_prog, c_sent, c_recv,
            c_bytes, c_input, c_copy)
