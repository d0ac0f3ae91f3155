"""Rendering of a :class:`~hedge.reproduce.table.Reproduction`: the aligned text table for
stdout, ``table.md`` and ``reproduction.json`` in the seed's folder, and the one HTML page
of ``hedge reproduce all``.

Every file is written atomically (a temporary file in the same folder, then a rename), so an
interrupted run leaves the previous file or none, never half of one.
"""

from __future__ import annotations

import dataclasses
import html
import json
from pathlib import Path

from hedge.errors import HedgeError
from hedge.outputs import write_atomic
from hedge.report.page import document, results_html
from hedge.reproduce.table import Reproduction, Row

COLUMNS = ("quantity", "published", "hedge", "difference", "why")


def _cells(row: Row) -> list[str]:
    return [" ".join(str(getattr(row, c)).split()) for c in COLUMNS]


def format_table(rows: list[Row]) -> str:
    """Aligned columns; ``why`` last and unpadded (it is the long one)."""
    cells = [list(COLUMNS)] + [_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS) - 1)]
    lines = []
    for line in cells:
        padded = [c.ljust(w) for c, w in zip(line, widths, strict=False)]
        lines.append("  ".join([*padded, line[-1]]).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths) + "  ---")
    return "\n".join(lines)


def _listing(label: str, items: list[str]) -> list[str]:
    return [f"{label}:", *(f"- {i}" for i in items)] if items else []


def format_text(rep: Reproduction) -> str:
    """What ``hedge reproduce SEED`` prints: title, table, readings, notes, figures."""
    parts = [f"{rep.seed}: {rep.title}", rep.citation, "", format_table(rep.rows), ""]
    parts += _listing("readings (where the paper's setup is ambiguous)", rep.readings)
    parts += _listing("notes", rep.notes)
    parts += _listing("figures", rep.figures)
    return "\n".join(parts).rstrip() + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|") or " "


def format_markdown(rep: Reproduction) -> str:
    """``table.md``: the same content as a Markdown table and lists."""
    lines = [f"# {rep.seed}: {rep.title}", "", rep.citation, "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_md_cell(c) for c in _cells(r)) + " |" for r in rep.rows]
    for label, items in (("Readings", rep.readings), ("Notes", rep.notes)):
        if items:
            lines += ["", f"## {label}", "", *(f"- {i}" for i in items)]
    if rep.figures:
        lines += ["", "## Figures", "", *(f"![{f}]({f})" for f in rep.figures)]
    return "\n".join(lines) + "\n"


def to_json(rep: Reproduction) -> str:
    return json.dumps(dataclasses.asdict(rep), indent=1, ensure_ascii=False) + "\n"


def from_json(text: str, where: str = "reproduction.json") -> Reproduction:
    """The record back from :func:`to_json` (HedgeError naming ``where`` if it is not one)."""
    try:
        data = json.loads(text)
        rows = [Row(**r) for r in data.pop("rows")]
        return Reproduction(**data, rows=rows)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise HedgeError(f"{where}: not a reproduction record ({exc})") from exc


def write_seed(rep: Reproduction, out: Path) -> list[Path]:
    """``table.md`` and ``reproduction.json`` in ``out``."""
    return [write_atomic(out / "table.md", format_markdown(rep)),
            write_atomic(out / "reproduction.json", to_json(rep))]


def _section(rep: Reproduction) -> str:
    head = (f"<h2 id='{html.escape(rep.seed)}'>{html.escape(rep.seed)}: "
            f"{html.escape(rep.title)}</h2><p>{html.escape(rep.citation)}</p>")
    text = format_table(rep.rows)
    if rep.readings:
        text += "\n\n" + "\n".join(_listing("readings", rep.readings))
    figures = {name: {"title": name} for name in rep.figures}
    return head + results_html(rep.notes, text, figures, heading="h3", folder=f"{rep.seed}/")


def write_index(root: Path, reps: list[Reproduction], missing: dict[str, str]) -> Path:
    """``root/index.html``: each seed's table, readings, notes and figures (the figures sit
    in ``root/<seed>/``), and a line per seed that could not be reproduced."""
    body = ""
    if missing:
        items = "".join(f"<li><b>{html.escape(s)}</b>: missing ({html.escape(why)})</li>"
                        for s, why in missing.items())
        body += f"<h2>Seeds not reproduced</h2><ul>{items}</ul>"
    body += "".join(_section(r) for r in reps)
    return write_atomic(root / "index.html", document("hedge reproduce: the papers' results",
                                                      body))
