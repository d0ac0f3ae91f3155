"""What every hedge report page shares: the figure look, the data behind each figure
(``figures.json``, so a reader or a test can check what was drawn) and the HTML skeleton."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def finish(fig, ax, xlabel: str, ylabel: str, title: str, path: Path, legend: bool) -> dict:
    """Label, grid, legend and save one plot (the same look for every figure); returns the
    axes' limits as drawn, for ``figures.json``."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=8)
    fig.tight_layout()
    limits = {"title": title, "xlabel": xlabel, "ylabel": ylabel,
              "xlim": [float(v) for v in ax.get_xlim()], "ylim": [float(v) for v in ax.get_ylim()]}
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return limits


def _finite(value: object) -> object:
    """NaN and infinities -> None, recursively (valid JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def document(title: str, body: str) -> str:
    """The HTML skeleton every hedge page shares: head, style, the title as h1, ``body``."""
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
        "pre{background:#f4f4f4;padding:1em;overflow-x:auto}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def results_html(notes: list[str], text: str, figures: dict[str, dict], caption: str = "",
                 heading: str = "h2", folder: str = "") -> str:
    """Notes, ``text`` (preformatted), the caption and the figures' images (``folder``: the
    images' folder relative to the page)."""
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    images = "".join(f'<p><img src="{html.escape(folder + name)}" '
                     f'alt="{html.escape(info.get("title", name))}"></p>'
                     for name, info in figures.items())
    return (f"<ul>{items}</ul><{heading}>Results</{heading}>"
            f"<pre>{html.escape(text)}</pre>"
            + (f"<p>{html.escape(caption)}</p>" if caption else "")
            + f"<{heading}>Plots</{heading}>{images}")


def write_page(out: Path, title: str, notes: list[str], text: str, figures: dict[str, dict],
               caption: str = "") -> Path:
    """``out/report.html``: title, notes, ``text`` (preformatted), the figures' PNGs (already
    in ``out``); and ``out/figures.json``: per PNG, its axes and the data it shows."""
    page = document(title, results_html(notes, text, figures, caption))
    (out / "figures.json").write_text(json.dumps(_finite(figures), indent=1) + "\n")
    path = out / "report.html"
    path.write_text(page)
    return path
