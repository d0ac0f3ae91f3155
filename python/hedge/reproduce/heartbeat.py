"""``hedge reproduce heartbeat``: the detection study of Phan, Pallez, Ibrahim et al.,
"Stragglers' Detection in Big Data Analytic Systems: The Impact of Heartbeat Arrival",
CCGrid 2022, re-run with :mod:`hedge.research.study` (the model ``hedge detect study`` runs).

The paper's claim is qualitative here (no PDF): asynchronous heartbeat arrival makes
detectors both flag normal tasks (false positives) and miss stragglers (false negatives).
The table checks it cell by cell (each latency cell against the same cell without latency),
the held-out cell of issue 19 (score detector, n = 50, d = 20 s, f = 0.25, uniform starts,
Pareto latency) and the homogeneous jobs with latency; the box plots are the paper's figure
type (FP and FN per repetition, per cell and detector).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from hedge.reproduce.table import Reproduction, Row
from hedge.research.plots import box_plots
from hedge.research.study import StudyConfig, grid, run_study

TITLE = "Stragglers' Detection in Big Data Analytic Systems: The Impact of Heartbeat Arrival"
CITATION = "Phan, Pallez, Ibrahim et al., CCGrid 2022 (hal-03777656)"
# Issue 19: with the old scans the held-out cell gave FP 0.156, "about 2.5x the expected"
# value of an independent reading of the published setup, i.e. about 0.062.
HELD_OUT = StudyConfig(50, 20.0, 0.25, "uniform", "pareto")
OLD_FP = 0.156
HELD_OUT_FP = OLD_FP / 2.5
CLASSIC = ("score", "rate")
DETECTORS = ("score", "rate", "fresh-score", "fresh-rate")


def _sizes(quick: bool) -> dict:
    if quick:
        return dict(tasks=(10,), d_avg=(10.0, 20.0), reps=10, held_out_reps=100,
                    detectors=(*CLASSIC, "fresh-rate"))
    return dict(tasks=(10, 50), d_avg=(10.0, 20.0, 50.0, 100.0), reps=50, held_out_reps=1000,
                detectors=DETECTORS)


def _held_out_row(reps: int) -> Row:
    """The held-out cell against issue 19's expected value: the old 0.156 was "about 2.5x"
    it, read as 2.25x to 2.75x, so the expected value lies in 0.057 to 0.069."""
    _, raw = run_study([HELD_OUT], ["score"], reps=reps, seed=1)
    fp = raw[(HELD_OUT, "score")][0]
    fp = fp[np.isfinite(fp)]
    mean, se = float(fp.mean()), float(fp.std(ddof=1) / math.sqrt(len(fp)))
    low, high = OLD_FP / 2.75, OLD_FP / 2.25
    within = mean + 3 * se >= low and mean - 3 * se <= high
    return Row(
        "FP mean, score detector, n=50 d=20 s f=0.25 uniform starts, Pareto latency "
        f"(held-out cell, {len(fp)} reps)",
        f"~{HELD_OUT_FP:.3f}, {low:.3f}-{high:.3f} (issue 19: the old {OLD_FP} was 'about "
        "2.5x' the expected value of an independent reading; no table here)",
        f"{mean:.3f} ± {se:.3f}",
        f"{mean - HELD_OUT_FP:+.3f}; " + ("within the range" if within else "outside the range"),
        "" if within else "more than 3 s.e. outside the expected range: the detection "
        "instants or the latency model differ from the independent reading",
    )


def _paired(rows: list[dict], detector: str, key: str) -> tuple[float, float, int, int]:
    """Mean of ``key`` over the latency cells and over the same cells without latency, the
    number of cells where latency raised it and the number compared."""
    by = {(r["tasks"], r["d_avg"], r["f"], r["starts"], r["latency"]): r[key]
          for r in rows if r["detector"] == detector}
    pairs = [(v, by.get((*k[:4], "none"))) for k, v in by.items() if k[4] == "pareto"]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not pairs:
        return math.nan, math.nan, 0, 0
    late, prompt = np.array(pairs).T
    return float(late.mean()), float(prompt.mean()), int((late > prompt).sum()), len(pairs)


def _values(rows: list[dict], detector: str, key: str) -> np.ndarray:
    return np.array([r[key] for r in rows if r["detector"] == detector and r[key] is not None])


def _error_row(rows: list[dict], key: str, what: str, claim: str) -> Row:
    """Which classic detectors err this way (rate > 0) in some cells of the grid."""
    parts, erring = [], []
    for detector in CLASSIC:
        v = _values(rows, detector, key)
        parts.append(f"{detector}: mean {v.mean():.3f}, > 0 in {(v > 0).sum()} of {len(v)} cells")
        if (v > 0).any():
            erring.append(detector)
    if len(erring) == len(CLASSIC):
        difference, why = "agrees", ""
    elif erring:
        difference = f"agrees for {', '.join(erring)} only"
        why = (f"{', '.join(d for d in CLASSIC if d not in erring)} never has {what} > 0 here: "
               "its rule flags every task slower than the job's mean rate, so it misses "
               "nothing and pays with the highest FP")
    else:
        difference, why = "disagrees", f"no classic detector has {what} > 0 on this grid"
    return Row(f"{what} of the classic detectors over the grid", claim, "; ".join(parts),
               difference, why)


def _staleness_row(rows: list[dict]) -> Row:
    """rate against fresh-rate, the same rule on estimates that account for the age of the
    last heartbeat: the FPs that go away are those heartbeat arrival caused."""
    rate, fresh = _values(rows, "rate", "fp_mean"), _values(rows, "fresh-rate", "fp_mean")
    agrees = fresh.mean() < rate.mean() / 2
    return Row(
        "FP of rate vs fresh-rate (same rule; fresh-rate accounts for the heartbeat's age)",
        "the errors come from heartbeat arrival (qualitative claim)",
        f"rate {rate.mean():.3f}, fresh-rate {fresh.mean():.3f} (mean over {len(rate)} cells)",
        "agrees" if agrees else "disagrees",
        "" if agrees else "accounting for the heartbeat's age removes less than half of "
        "rate's FPs here, so other causes (the rule's own threshold) dominate",
    )


def _homogeneous_row(rows: list[dict]) -> Row:
    per = {d: [r["fp_mean"] for r in rows if r["f"] == 0.0 and r["latency"] == "pareto"
               and r["detector"] == d and r["fp_mean"] is not None] for d in CLASSIC}
    agrees = all(v and np.mean(v) > 0 for v in per.values())
    hedge = "; ".join(f"{d}: mean {np.mean(v):.3f}, > 0 in {sum(x > 0 for x in v)} of "
                      f"{len(v)} cells" for d, v in per.items() if v)
    return Row(
        "FP in homogeneous jobs (f=0) with Pareto latency",
        "not exactly 0: late end reports get flagged (issue 19)",
        hedge or "-",
        "agrees" if agrees else "disagrees",
        "" if agrees else "no homogeneous cell with latency flagged a task on this grid",
    )


def _latency_note(rows: list[dict]) -> str:
    parts = []
    for detector in CLASSIC:
        for key, what in (("fp_mean", "FP"), ("fn_mean", "FN")):
            late, prompt, higher, cells = _paired(rows, detector, key)
            parts.append(f"{detector} {what} {prompt:.3f} -> {late:.3f} "
                         f"(higher in {higher} of {cells})")
    return ("Pareto latency against none, same cells (measured; the paper's PDF is not here "
            "to say what it expects): " + "; ".join(parts))


def reproduce(out: Path, quick: bool = False) -> Reproduction:
    size = _sizes(quick)
    configs = grid(size["tasks"], size["d_avg"])
    rows, raw = run_study(configs, size["detectors"], reps=size["reps"], seed=0)
    figures = [p.name for p in box_plots(raw, out)]
    table = [_held_out_row(size["held_out_reps"]),
             _error_row(rows, "fp_mean", "FP", "above 0: normal tasks flagged (qualitative claim)"),
             _error_row(rows, "fn_mean", "FN", "above 0: stragglers missed (qualitative claim)"),
             _staleness_row(rows), _homogeneous_row(rows)]
    cells = len(configs)
    return Reproduction(
        seed="heartbeat", title=TITLE, citation=CITATION, rows=table, figures=figures,
        readings=[
            "score = Hadoop's progress-score rule, rate = LATE's progress-rate rule "
            "(hedge.detect.rules); the paper's detectors as hedge's study names them",
            "detection on the AM's whole-second clock from the first received end report "
            "to the last (issue 19 item 1)",
            "'asynchronous heartbeat arrival causes FPs and FNs' is read as: the classic "
            "detectors err in both ways on the grid, and the same rule on estimates that "
            "account for the heartbeat's age (fresh-rate) errs much less",
        ],
        notes=[
            f"grid: tasks {size['tasks']}, d {size['d_avg']} s, f (0, 0.1, 0.25), uniform and "
            f"skewed starts, latency none and Pareto: {cells} cells x "
            f"{len(size['detectors'])} detectors, {size['reps']} repetitions each, seed 0",
            "the held-out cell is drawn apart (seed 1), so it is not the grid's own cell",
            _latency_note(rows),
            "the published figure for the held-out cell is an expected value quoted by issue "
            "19, not a number read from the paper (its PDF is not available here)",
            *([] if not quick else ["--quick: n = 10 only, d in (10, 20) s, 10 repetitions; "
                                    "wide noise"]),
        ],
    )

