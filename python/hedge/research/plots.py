"""Box plots of the detection study: per-repetition FP and FN rates."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from hedge.research.study import StudyConfig

Raw = dict[tuple[StudyConfig, str], tuple[np.ndarray, np.ndarray]]


def box_plots(raw: Raw, out_dir: Path) -> list[Path]:
    """``fp_n<N>.png`` and ``fn_n<N>.png`` per task count N in ``out_dir``: one panel per
    (f, starts, latency), boxes grouped by mean duration d, one colour per detector, over
    the repetitions (NaN rates, e.g. FN of jobs without stragglers, left out)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    configs = list(dict.fromkeys(cfg for cfg, _ in raw))
    detectors = list(dict.fromkeys(name for _, name in raw))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / len(detectors)
    paths = []
    for tasks in sorted({c.tasks for c in configs}):
        mine = [c for c in configs if c.tasks == tasks]
        spreads = sorted({c.f for c in mine})
        columns = sorted({(c.starts, c.latency) for c in mine})
        d_values = sorted({c.d_avg for c in mine})
        for metric, index in (("fp", 0), ("fn", 1)):
            fig, axes = plt.subplots(len(spreads), len(columns), squeeze=False,
                                     figsize=(4.2 * len(columns), 2.8 * len(spreads)))
            for (i, f), (j, (starts, latency)) in itertools.product(
                    enumerate(spreads), enumerate(columns)):
                ax = axes[i, j]
                for k, name in enumerate(detectors):
                    data, pos = [], []
                    for x, d in enumerate(d_values):
                        cfg = next((c for c in mine if (c.f, c.starts, c.latency, c.d_avg)
                                    == (f, starts, latency, d)), None)
                        values = raw[(cfg, name)][index] if cfg else np.empty(0)
                        values = values[np.isfinite(values)]
                        if len(values):
                            data.append(values)
                            pos.append(x + (k - (len(detectors) - 1) / 2) * width)
                    if data:
                        box = ax.boxplot(data, positions=pos, widths=width * 0.9,
                                         patch_artist=True, showfliers=False)
                        for patch in box["boxes"]:
                            patch.set_facecolor(colours[k % len(colours)])
                ax.set_xticks(range(len(d_values)), [f"d={d:g}" for d in d_values])
                ax.set_ylim(-0.02, 1.02)
                ax.set_title(f"f={f:g}, {starts} starts, latency {latency}", fontsize=9)
                ax.set_ylabel(f"{metric.upper()} rate")
            handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k % len(colours)])
                       for k in range(len(detectors))]
            fig.legend(handles, detectors, loc="lower center", ncol=len(detectors))
            fig.suptitle(f"{metric.upper()} rate per repetition, n = {tasks} tasks")
            fig.tight_layout(rect=(0, 0.05, 1, 0.97))
            path = out_dir / f"{metric}_n{tasks}.png"
            fig.savefig(path, dpi=100)
            plt.close(fig)
            paths.append(path)
    return paths
