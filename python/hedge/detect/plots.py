"""Box plots of the detection study: per-repetition FP and FN rates."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hedge.detect.study import StudyConfig

Raw = dict[tuple[StudyConfig, str], tuple[np.ndarray, np.ndarray]]


def box_plots(raw: Raw, out_dir: Path) -> list[Path]:
    """``fp.png`` and ``fn.png`` in ``out_dir``: one panel per (tasks, starts, latency),
    boxes grouped by mean duration d, one colour per detector, repetitions of all f
    pooled (NaN rates, e.g. FN without stragglers, left out)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    configs = [cfg for cfg, _ in raw]
    detectors = list(dict.fromkeys(name for _, name in raw))
    panels = sorted({(c.tasks, c.starts, c.latency) for c in configs})
    d_values = sorted({c.d_avg for c in configs})
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    paths = []
    for metric, index in (("fp", 0), ("fn", 1)):
        cols = min(4, len(panels))
        rows = int(np.ceil(len(panels) / cols))
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
        width = 0.8 / len(detectors)
        for ax, (tasks, starts, latency) in zip(axes.flat, panels, strict=False):
            for k, name in enumerate(detectors):
                data, pos = [], []
                for j, d in enumerate(d_values):
                    values = np.concatenate([
                        rates[index] for (c, n), rates in raw.items()
                        if n == name and (c.tasks, c.starts, c.latency, c.d_avg)
                        == (tasks, starts, latency, d)
                    ] or [np.empty(0)])
                    values = values[np.isfinite(values)]
                    if len(values):
                        data.append(values)
                        pos.append(j + (k - (len(detectors) - 1) / 2) * width)
                if data:
                    box = ax.boxplot(data, positions=pos, widths=width * 0.9,
                                     patch_artist=True, showfliers=False)
                    for patch in box["boxes"]:
                        patch.set_facecolor(colours[k % len(colours)])
            ax.set_xticks(range(len(d_values)), [f"d={d:g}" for d in d_values])
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"n={tasks}, {starts} starts, latency {latency}", fontsize=9)
            ax.set_ylabel(f"{metric.upper()} rate")
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k % len(colours)])
                   for k in range(len(detectors))]
        fig.legend(handles, detectors, loc="lower center", ncol=len(detectors))
        fig.tight_layout(rect=(0, 0.06, 1, 1))
        path = out_dir / f"{metric}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
