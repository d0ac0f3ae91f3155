"""``report.html``: the results table and three plots (PNG files beside it).

- job-time CDF per policy;
- cost vs latency: machine time against mean job time, one point per run;
- copies over time: speculative copies launched per time bin, per policy.
"""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hedge.report.table import format_table  # noqa: E402
from hedge.sim.sweep import RunSummary  # noqa: E402


def _label(run: RunSummary, many_seeds: bool) -> str:
    return f"{run.row['policy']} (seed {run.row['seed']})" if many_seeds else run.row["policy"]


def _finish(fig, ax, xlabel: str, ylabel: str, title: str, path: Path, legend: bool) -> None:
    """Label, grid, legend and save one plot (the same look for every figure)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cdf(runs: list[RunSummary], many: bool, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for run in runs:
        times = np.sort(run.job_time[np.isfinite(run.job_time)])
        if len(times):
            ax.step(times, np.arange(1, len(times) + 1) / len(times), where="post",
                    label=_label(run, many))
    ax.set_xscale("symlog", linthresh=1.0)
    _finish(fig, ax, "job time (s)", "fraction of jobs", "Job-time CDF", path, legend=True)


def _cost(runs: list[RunSummary], many: bool, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for run in runs:
        ax.scatter(run.row["mean_job_time"], run.row["machine_time"] / 3600.0,
                   label=_label(run, many))
    _finish(fig, ax, "mean job time (s)", "machine time (slot-hours)", "Cost vs latency", path,
            legend=True)


def _copies(runs: list[RunSummary], many: bool, path: Path) -> None:
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
    _finish(fig, ax, "simulated time (s)", "copies launched per bin", "Copies over time", path,
            legend=bool(starts))


def write_report(out: Path, runs: list[RunSummary], title: str, notes: list[str]) -> Path:
    """Write ``out/report.html`` and its PNGs; returns the HTML path."""
    out.mkdir(parents=True, exist_ok=True)
    many = len({r.row["seed"] for r in runs}) > 1
    plots = {"job_time_cdf.png": _cdf, "cost_vs_latency.png": _cost,
             "copies_over_time.png": _copies}
    for name, draw in plots.items():
        draw(runs, many, out / name)
    table = html.escape(format_table([r.row for r in runs]))
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    images = "".join(f'<p><img src="{name}" alt="{name}"></p>' for name in plots)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
        "pre{background:#f4f4f4;padding:1em;overflow-x:auto}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><ul>{items}</ul><h2>Results</h2><pre>{table}</pre>"
        "<p>Times in seconds; energy in kWh; PoCD = share of jobs meeting their deadline; "
        "precision/recall of speculation against ground-truth stragglers.</p>"
        f"<h2>Plots</h2>{images}</body></html>"
    )
    path = out / "report.html"
    path.write_text(page)
    return path
