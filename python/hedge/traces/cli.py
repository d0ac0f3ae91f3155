"""``hedge traces``: look at a trace before simulating it."""

from __future__ import annotations

import json

import click

from hedge.model import MAP, REDUCE
from hedge.traces.formats import FORMATS, load
from hedge.traces.stats import compute, format_text


@click.group("traces")
def traces() -> None:
    """Read traces and report their straggler statistics."""


@traces.command("stats")
@click.argument("trace", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print every figure as JSON.")
@click.option("--threshold", default=1.5, show_default=True, type=float,
              help="A task is a straggler above threshold x its job's mean (or median).")
@click.option("--by-type/--mixed", default=None,
              help="Compare maps with maps and reduces with reduces (job:MAP, job:REDUCE; the "
                   "default when the trace has both), or all of a job's tasks together.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Skip format detection.")
@click.option("--drop-negative", is_flag=True,
              help="Skip (and count) rows with a negative duration instead of failing.")
def stats(trace: str, as_json: bool, threshold: float, by_type: bool | None, fmt: str | None,
          drop_negative: bool) -> None:
    """Per-job and trace-wide straggler statistics of TRACE (a file, or a directory of
    Google 2011 task_events part files)."""
    options: dict[str, object] = {}
    if fmt:
        options["format"] = fmt
    if drop_negative:
        options["negative"] = "drop"
    workload = load(trace, **options)
    if by_type is None:
        by_type = bool((workload.task_type == REDUCE).any() and (workload.task_type == MAP).any())
    result = compute(workload, threshold=threshold, by_type=by_type)
    if as_json:
        click.echo(json.dumps(result.to_dict()))
    else:
        click.echo(format_text(result))
