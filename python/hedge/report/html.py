"""``report.html``: the results table and its plots (PNG files beside it, the data behind
each in ``figures.json``).

- which policy to turn on: per policy an AM can run, the mean job time it saves against
  none's (%) and the slot-hours its killed attempts wasted, averaged over seeds; the
  policies no other beats on both (``hedge.sim.standings``' frontier) are marked and joined,
  and a clairvoyant run (``oracle``) is a dashed line at its saving. Both axes from zero
  (none's saving; no waste), the saving axis at least 2 percentage points wide, with a line
  saying so where no policy saves 1 % (the standings' no-gain band); policies on one spot
  share a label. The nearer a point to the lower right, the better;
- job-time CDF per policy;
- job-time tail: the 95th to 99th percentile of job time per policy (axis from zero);
- cost vs latency: machine time against mean job time, one point per run (both axes from
  zero, so a 19 % difference looks like 19 %); an ``oracle`` run is a dashed line at its mean
  job time: the clairvoyant reference (policy/oracle.py: not a strict bound);
- copies over time: speculative copies launched per time bin, per policy;
- precision / recall of the copies against the ground-truth stragglers, per policy (n/a
  where the workload has no ground truth or nothing was copied);
- waste: machine time spent on attempts that were killed, per policy.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from hedge.report.page import finish, write_page
from hedge.report.table import format_table
from hedge.sim.standings import NO_GAIN, frontier, standings
from hedge.sim.sweep import RunSummary

TAIL_PERCENTILES = np.arange(95.0, 99.01, 0.5)
MIN_SPAN_PERCENT = 2.0  # the which-policy plot's narrowest saving axis (percentage points)


def _label(run: RunSummary, many_seeds: bool) -> str:
    return f"{run.row['policy']} (seed {run.row['seed']})" if many_seeds else run.row["policy"]


def _choice(runs: list[RunSummary], many: bool, path: Path) -> dict:
    """Which policy to turn on: saving of mean job time against waste, per policy (seeds
    averaged, as the standings under the table are); without a ``none`` run the x axis is
    the mean job time itself."""
    rows = [r.row for r in runs]
    ranked = standings(rows)
    edge = frontier(ranked)
    none = next((s.mean for s in ranked if s.policy == "none"), 0.0)
    saving = none > 0

    def x_of(mean: float) -> float:
        return 100.0 * (1.0 - mean / none) if saving else mean

    points = {s.policy: [x_of(s.mean), s.waste / 3600.0] for s in ranked}
    oracle = {s.policy: x_of(s.mean) for s in standings(rows, references=True)}
    no_gain = saving and max(x for x, _ in points.values()) < 100.0 * NO_GAIN
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    _draw_choice(ax, points, [s.policy for s in edge], oracle)
    if saving:
        # at least MIN_SPAN_PERCENT wide: differences within the standings' no-gain band
        # must not be blown up to fill the plot
        xs = [x for x, _ in points.values()] + list(oracle.values())
        low, high = min(0.0, *xs), max(0.0, *xs)
        span = max(high - low, MIN_SPAN_PERCENT)
        ax.set_xlim(low - 0.08 * span, low + 1.2 * span)  # room for the names on the right
        if no_gain:
            ax.text(0.5, 0.5, f"no policy saves {NO_GAIN:.0%} or more of none's mean job "
                    "time:\nspeculation gains nothing on this workload",
                    ha="center", transform=ax.transAxes, fontsize=9, color="0.3")
    ax.set_ylim(bottom=0)
    xlabel = ("mean job time saved, % of none's (further right is faster)" if saving
              else "mean job time (s)")
    info = finish(fig, ax, xlabel, "wasted machine time (slot-hours)",
                  "Which policy to turn on: saving against waste", path, legend=bool(points))
    return {**info, "points": points, "frontier": [s.policy for s in edge], "oracle": oracle,
            "x": "saved_percent_of_none" if saving else "mean_job_time_s", "no_gain": no_gain}


def _draw_choice(ax, points: dict[str, list[float]], edge: list[str],
                 oracle: dict[str, float]) -> None:
    """The frontier's points filled and joined (from the fastest to the least wasteful), the
    others hollow, each named; a clairvoyant run's saving as a dashed line."""
    if edge:
        ax.plot([points[p][0] for p in edge], [points[p][1] for p in edge], color="C0",
                linewidth=1, zorder=1)
    names: dict[tuple[float, float], list[str]] = {}  # policies on one spot share a label
    for policy, (x, y) in points.items():
        names.setdefault((x, y), []).append(policy)
    for (x, y), here in names.items():
        on = any(policy in edge for policy in here)
        ax.scatter(x, y, s=40 if on else 28, zorder=2,
                   facecolors="C0" if on else "none", edgecolors="C0" if on else "0.45")
        ax.annotate(", ".join(here), (x, y), xytext=(4, 3), textcoords="offset points",
                    fontsize=7, fontweight="bold" if on else "normal")
    ax.scatter([], [], s=40, color="C0", label="not beaten on both (turn one of these on)")
    ax.scatter([], [], s=28, facecolors="none", edgecolors="0.45",
               label="another is faster and wastes no more")
    for policy, x in oracle.items():
        ax.axvline(x, color="0.3", linestyle="--", linewidth=1,
                   label=f"{policy}: clairvoyant reference")


def _cdf(runs: list[RunSummary], many: bool, path: Path) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for run in runs:
        times = np.sort(run.job_time[np.isfinite(run.job_time)])
        if len(times):
            ax.step(times, np.arange(1, len(times) + 1) / len(times), where="post",
                    label=_label(run, many))
    ax.set_xscale("symlog", linthresh=1.0)
    return finish(fig, ax, "job time (s)", "fraction of jobs", "Job-time CDF", path, legend=True)


def _tail(runs: list[RunSummary], many: bool, path: Path) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    series = {}
    for run in runs:
        times = run.job_time[np.isfinite(run.job_time)]
        if len(times):
            values = np.percentile(times, TAIL_PERCENTILES)
            series[_label(run, many)] = values.tolist()
            ax.plot(TAIL_PERCENTILES, values, marker="o", markersize=3, label=_label(run, many))
    top = max((max(v) for v in series.values()), default=0.0)
    ax.set_ylim(0, top * 1.08 if top > 0 else 1.0)
    info = finish(fig, ax, "percentile of job time", "job time (s)",
                  "Job-time tail (p95 to p99)", path, legend=bool(series))
    return {**info, "percentiles": TAIL_PERCENTILES.tolist(), "series": series}


def _cost(runs: list[RunSummary], many: bool, path: Path) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    points = {}
    for run in runs:
        x, y = run.row["mean_job_time"], run.row["machine_time"] / 3600.0
        points[_label(run, many)] = [x, y]
        if run.row["policy"] == "oracle":  # the reference line every comparison carries
            ax.axvline(x, color="0.3", linestyle="--", linewidth=1,
                       label=f"{_label(run, many)}: clairvoyant reference")
        else:
            ax.scatter(x, y, label=_label(run, many))
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)  # from zero: the distance between points is the real difference
    info = finish(fig, ax, "mean job time (s)", "machine time (slot-hours)", "Cost vs latency",
                  path, legend=True)
    return {**info, "points": points}


def _copies(runs: list[RunSummary], many: bool, path: Path) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    starts = [r.copy_start for r in runs if len(r.copy_start)]
    if starts:
        top = max(float(s.max()) for s in starts)
        bins = np.linspace(0, max(top, 1.0), 50)
        for run in runs:
            counts, edges = np.histogram(run.copy_start, bins=bins)
            ax.step(edges[:-1], counts, where="post", label=_label(run, many))
    else:
        ax.text(0.5, 0.5, "no policy launched copies", ha="center", transform=ax.transAxes)
    return finish(fig, ax, "simulated time (s)", "copies launched per bin", "Copies over time",
                  path, legend=bool(starts))


def _bars(ax, labels: list[str], groups: dict[str, list[float | None]]) -> None:
    """Grouped bars, one group per label; a missing value is written 'n/a' at the axis."""
    width = 0.8 / len(groups)
    for g, (name, values) in enumerate(groups.items()):
        x = np.arange(len(labels)) + (g - (len(groups) - 1) / 2) * width
        heights = [0.0 if v is None else v for v in values]
        ax.bar(x, heights, width, label=name)
        for xi, v in zip(x, values, strict=True):
            if v is None:
                ax.text(xi, 0, "n/a", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.set_xticks(np.arange(len(labels)), labels, rotation=30, ha="right", fontsize=8)


def _precision(runs: list[RunSummary], many: bool, path: Path) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    labels = [_label(r, many) for r in runs]
    groups = {key: [r.row.get(key) for r in runs] for key in ("precision", "recall")}
    _bars(ax, labels, groups)
    ax.set_ylim(0, 1.05)
    info = finish(fig, ax, "policy", "fraction", "Precision and recall of the copies", path,
                  legend=True)
    return {**info, "labels": labels, **groups}


def _waste(runs: list[RunSummary], many: bool, path: Path) -> dict:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    labels = [_label(r, many) for r in runs]
    wasted = [None if r.row.get("wasted_s") is None else r.row["wasted_s"] / 3600.0
              for r in runs]
    _bars(ax, labels, {"killed attempts": wasted})
    ax.set_ylim(bottom=0)
    info = finish(fig, ax, "policy", "wasted machine time (slot-hours)",
                  "Waste: time of attempts that were killed", path, legend=False)
    return {**info, "labels": labels, "wasted_slot_hours": wasted}


PLOTS = {"which_policy.png": _choice, "job_time_cdf.png": _cdf, "job_time_tail.png": _tail,
         "cost_vs_latency.png": _cost, "copies_over_time.png": _copies,
         "precision_recall.png": _precision, "waste.png": _waste}


def write_report(out: Path, runs: list[RunSummary], title: str, notes: list[str],
                 after_table: list[str] = ()) -> Path:
    """Write ``out/report.html``, its PNGs and ``figures.json``; returns the HTML path.
    ``after_table``: lines shown under the table, in its type (``hedge.sim.paired``)."""
    out.mkdir(parents=True, exist_ok=True)
    many = len({r.row["seed"] for r in runs}) > 1
    figures = {name: draw(runs, many, out / name) for name, draw in PLOTS.items()}
    caption = ("Times in seconds; energy in kWh; PoCD = share of jobs meeting their deadline; "
               "precision/recall of speculation against ground-truth stragglers ('-' or n/a: "
               "no ground truth, or nothing copied); of_oracle = share of the clairvoyant "
               "oracle's mean-job-time gain over none that a policy captures (shown when both "
               "ran; the oracle does not see the copy's node or the wait for a slot, so a "
               "policy can pass 1.0).")
    text = "\n".join([format_table([r.row for r in runs]), *(["", *after_table] if after_table
                                                             else [])])
    return write_page(out, title, notes, text, figures, caption)
