"""The summary table of a run: one row of figures per policy (the ``--json`` schema)."""

from __future__ import annotations

import math

import numpy as np

from hedge.sim.results import KILLED, WON, SimResult

# column order of the printed table and keys of the --json objects (times in seconds)
KEYS = (
    "policy", "jobs", "mean_job_time", "p50_job_time", "p95_job_time", "p99_job_time",
    "makespan", "machine_time", "wasted_s", "energy_J", "deadline_hit_rate",
    "copies_launched", "copies_won", "copies_killed", "precision", "recall",
)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def summarize(result: SimResult) -> dict:
    """The figures of one run.

    - job time = finish - arrival; mean and percentiles over jobs with tasks;
    - makespan = last finish - first arrival; machine time = sum over every attempt that
      held a slot (killed ones included) of end - start; wasted_s = the part of it spent
      on attempts that were killed (copies and originals: the loser of every race, and
      whatever a policy killed); wasted_copies_s = the part of wasted_s spent on killed
      copies (races a copy lost, copies a policy killed), so wasted_s - wasted_copies_s is
      what killed originals held (the price of every race a copy won, and restarts);
      energy_J (joules) from
      ``hedge.sim.energy``;
    - deadline hit rate (PoCD) = share of jobs finishing by their deadline (None without
      deadlines);
    - copies launched / won / killed: speculative attempts that got a slot / succeeded /
      were killed (a copy that won finished before its original would have: every won
      copy saved time);
    - precision = true stragglers among tasks the policy copied / tasks copied; recall =
      copied true stragglers / true stragglers (None when a denominator is 0, and when the
      workload has no ground truth: a trace);
    - first_slot_wait_s: the mean over jobs (those with a job time) of the wait from a job's
      arrival to its first attempt's start: how much of the job time is the cluster's queue
      (``queue_note``).
    """
    times = result.job_time
    times = times[np.isfinite(times)]
    att = result.attempts
    copy = att.copy
    has_deadline = np.isfinite(result.deadline)
    hits = (result.finish <= result.deadline + 1e-9) & has_deadline
    tp = int((result.detected & result.straggler).sum())
    pct = (lambda q: float(np.percentile(times, q))) if len(times) else (lambda q: math.nan)
    return {
        "policy": result.policy,
        "jobs": int(len(result.job_ids)),
        "mean_job_time": float(times.mean()) if len(times) else math.nan,
        "p50_job_time": pct(50),
        "p95_job_time": pct(95),
        "p99_job_time": pct(99),
        "makespan": float(np.nanmax(result.finish) - result.arrival.min()) if len(times) else 0.0,
        "machine_time": float(att.duration.sum()),
        "wasted_s": float(att.duration[att.outcome == KILLED].sum()),
        "wasted_copies_s": float(att.duration[copy & (att.outcome == KILLED)].sum()),
        "energy_J": float(result.energy),  # joules; the table shows kWh
        "deadline_hit_rate": _ratio(int(hits.sum()), int(has_deadline.sum())),
        "copies_launched": int(copy.sum()),
        "copies_won": int((copy & (att.outcome == WON)).sum()),
        "copies_killed": int((copy & (att.outcome == KILLED)).sum()),
        "precision": _ratio(tp, int(result.detected.sum())) if result.straggler_truth else None,
        "recall": _ratio(tp, int(result.straggler.sum())) if result.straggler_truth else None,
        "first_slot_wait_s": _first_slot_wait(result),
    }


# a run whose jobs waited this share of their mean job time or more for their first slot
# says so (queue_note): its job times are mostly the cluster's queue
QUEUED_SHARE = 0.2


def _first_slot_wait(result: SimResult) -> float:
    """``first_slot_wait_s`` of ``summarize`` (NaN without a job that has a job time)."""
    att = result.attempts
    first = np.full(len(result.arrival), np.inf)
    np.minimum.at(first, att.job, att.start)
    timed = np.isfinite(first) & np.isfinite(result.job_time)
    return float((first[timed] - result.arrival[timed]).mean()) if timed.any() else math.nan


def named_runs(runs: list[tuple[dict, str]], listed: int) -> str:
    """The runs a note under the table names: ``policy seed S: what`` for the first
    ``listed`` of ``(row, what)``, then how many more."""
    named = "; ".join(f"{row['policy']} seed {row.get('seed', 0)}: {what}"
                      for row, what in runs[:listed])
    return named + (f"; {len(runs) - listed} more" if len(runs) > listed else "")


def queue_note(rows: list[dict], listed: int = 4) -> str | None:
    """What runs whose job times are mostly their cluster's queue must say (one line for
    all such runs, the first ``listed`` of them named), else None."""
    queued = [(row, row["first_slot_wait_s"] / row["mean_job_time"]) for row in rows
              if _queued(row)]
    if not queued:
        return None
    named = named_runs([(row, f"{share:.0%}, {row['first_slot_wait_s']:,.0f} s")
                        for row, share in queued], listed)
    return (f"jobs waited {QUEUED_SHARE:.0%} or more of their mean job time for a first slot in "
            f"{len(queued)} of {len(rows)} runs ({named}): these job times are mostly "
            "the cluster's queue, and a policy is judged by how its copies lengthen it "
            "(--cluster scheduler=fair or more nodes to compare without it)")


def _queued(row: dict) -> bool:
    wait, mean = row.get("first_slot_wait_s"), row.get("mean_job_time")
    return (wait is not None and mean is not None and mean > 0
            and wait >= QUEUED_SHARE * mean)


def json_safe(row: dict) -> dict:
    """NaN -> None so the row is valid JSON."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
