"""``hedge reproduce SEED [--out DIR] [--quick]``: re-run one published result (or ``all``).

Each seed is the module ``hedge.reproduce.<seed>``, imported only when asked for, exposing
``reproduce(out, quick) -> Reproduction``. One seed: its table on stdout, ``table.md`` and
``reproduction.json`` (and its figures) in ``out/reproduce/<seed>`` unless ``--out`` says
otherwise. ``all``: every seed into ``<out>/<seed>`` (``<out>`` defaults to
``out/reproduce``) and one page ``<out>/index.html``; a seed that cannot run is one line on
stderr and a "missing" line on the page, and the command ends with exit status 2.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path

import click

from hedge.errors import HedgeError
from hedge.outputs import check_output
from hedge.reproduce.table import Reproduction

# the renderer (matplotlib) is imported where a table is written: `--help` needs none of it

SEEDS = ("heartbeat", "window", "chronos", "replication", "thesis")
DEFAULT_ROOT = Path("out") / "reproduce"


def run_seed(seed: str, out: Path, quick: bool) -> Reproduction:
    """Import ``hedge.reproduce.<seed>``, run it into ``out`` and write its files; any
    failure to import or HedgeError becomes one HedgeError naming the seed."""
    try:
        module = importlib.import_module(f"hedge.reproduce.{seed}")
        run = module.reproduce
    except Exception as exc:  # noqa: BLE001 - a broken or absent seed is one line, not a traceback
        raise HedgeError(f"seed '{seed}' could not be loaded: {type(exc).__name__}: "
                         f"{exc}") from exc
    out.mkdir(parents=True, exist_ok=True)
    try:
        rep = run(out, quick=quick)
    except HedgeError as exc:
        raise HedgeError(f"seed '{seed}': {exc}") from exc
    from hedge.reproduce.render import write_seed

    write_seed(rep, out)
    return rep


def _one(seed: str, out: Path, quick: bool) -> Reproduction:
    from hedge.reproduce.render import format_text

    began = time.monotonic()
    rep = run_seed(seed, out, quick)
    click.echo(format_text(rep))
    click.echo(f"wrote {out}/table.md, {out}/reproduction.json and {len(rep.figures)} "
               f"figure(s) in {time.monotonic() - began:.0f} s")
    return rep


@click.command("reproduce")
@click.argument("seed", type=click.Choice([*SEEDS, "all"]))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the files (default out/reproduce/<seed>; for 'all', the "
                   "folder holding each seed's folder and index.html, default out/reproduce).")
@click.option("--quick", is_flag=True,
              help="Small sizes: seconds instead of minutes, wider standard errors.")
def reproduce(seed: str, out: Path | None, quick: bool) -> None:
    """Re-run a published result hedge implements; print and write the table "published |
    hedge | difference | why", the readings chosen and the figures."""
    if out is not None:
        check_output(out, "--out", directory=True)
    if seed != "all":
        _one(seed, out or DEFAULT_ROOT / seed, quick)
        return
    root = out or DEFAULT_ROOT
    reps, missing = [], {}
    for name in SEEDS:
        try:
            reps.append(_one(name, root / name, quick))
        except HedgeError as exc:
            missing[name] = str(exc)
            click.echo(f"hedge: error: {exc}", err=True)
    from hedge.reproduce.render import write_index

    page = write_index(root, reps, missing)
    click.echo(f"wrote {page}")
    if missing:
        raise HedgeError(f"{len(missing)} of {len(SEEDS)} seeds not reproduced "
                         f"({', '.join(missing)}); {page} says which")
