"""``hedge traces``: look at a trace before simulating it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hedge.errors import HedgeError
from hedge.outputs import check_output
from hedge.traces.format_names import ATTEMPT_FORMAT_NAMES, FORMAT_NAMES

# the readers, the statistics and the models are imported in the commands that use them:
# a command's --help needs none of them (numpy, pyarrow; hedge.lazy)
if TYPE_CHECKING:
    from hedge.traces.rerun import RerunEvidence


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
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default=None,
              help="Skip format detection.")
@click.option("--drop-negative", is_flag=True,
              help="Skip (and count) rows with a negative duration instead of failing.")
@click.option("--out", "out_dir", type=click.Path(), default=None,
              help="Also write DIR/report.html: the statistics and their figures.")
def stats(trace: str, as_json: bool, threshold: float, by_type: bool | None, fmt: str | None,
          drop_negative: bool, out_dir: str | None) -> None:
    """Per-job and trace-wide straggler statistics of TRACE (a file, or a directory of
    Google 2011 task_events part files)."""
    if out_dir:
        check_output(out_dir, "--out", directory=True)
    options: dict[str, object] = {}
    if fmt:
        options["format"] = fmt
    if drop_negative:
        options["negative"] = "drop"
    from hedge.model import MAP, REDUCE
    from hedge.traces.formats import load
    from hedge.traces.stats import compute, format_text

    workload = load(trace, **options)
    if by_type is None:
        by_type = bool((workload.task_type == REDUCE).any() and (workload.task_type == MAP).any())
    result = compute(workload, threshold=threshold, by_type=by_type)
    reruns = _rerun_evidence(trace, fmt)
    if as_json:
        click.echo(json.dumps({**result.to_dict(),
                               "reruns": reruns.as_dict() if reruns else None}))
    else:
        click.echo(format_text(result))
        click.echo(_rerun_text(reruns))
    if out_dir:
        from hedge.report.trace_page import write_trace_report

        click.echo(f"report: {write_trace_report(Path(out_dir), workload, result)}", err=True)


def _rerun_evidence(trace: str, fmt: str | None) -> RerunEvidence | None:
    """The trace's re-run evidence, for formats that keep every attempt (else None)."""
    from hedge.traces.formats import detect, read_attempt_trace
    from hedge.traces.rerun import evidence

    if (fmt or detect(Path(trace))) not in ATTEMPT_FORMAT_NAMES:
        return None
    return evidence(read_attempt_trace(trace, format=fmt).table, source=trace)


def _rerun_text(e: RerunEvidence | None) -> str:
    """What the trace says about copies (docs/trace-model.md), and the model simulate uses."""
    from hedge.traces.straggler_model import CALIBRATED_LAMBDA

    lines = ["re-runs (docs/trace-model.md):"]
    if e is None:
        lines.append("  this format keeps one run per task: no re-run evidence")
    else:
        d = e.as_dict()
        slope = f", slope of 2nd on 1st residual {d['rerun_slope']}" if d["rerun_slope"] \
            is not None else ""
        lines.append(f"  tasks that succeeded twice: {e.reruns}{slope}")
        fit = (f"; transient share lam {d['lam']} (95% {d['lam_low']}-{d['lam_high']})"
               if d["lam"] is not None else "")
        lines.append(f"  original/copy races: {e.copy_pairs}, copies won {e.copies_won}"
                     f" ({e.pairs_in_small_groups} in jobs too small to fit){fit}")
    lines.append(f"  hedge simulate --trace uses --trace-model calibrated (lam "
                 f"{CALIBRATED_LAMBDA:g}) unless told otherwise")
    return "\n".join(lines)


@traces.command("model")
@click.argument("trace", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def model(trace: tuple[str, ...], as_json: bool) -> None:
    """Fit the transient share lam of the trace straggler model to the re-runs of every
    TRACE together (docs/trace-model.md; the calibrated model's value comes from this)."""
    from hedge.traces.formats import detect
    from hedge.traces.rerun import pooled

    found = [_rerun_evidence(t, None) for t in trace]
    for path, e in zip(trace, found, strict=True):
        if e is None:
            raise HedgeError(f"{path}: format {detect(Path(path))} keeps one run per task; "
                             f"give traces of {', '.join(ATTEMPT_FORMAT_NAMES)}")
    used = [e for e in found if e and e.loglik]
    lam, low, high = pooled(used) if used else (None, None, None)
    if as_json:
        click.echo(json.dumps({"traces": [e.as_dict() for e in found if e],
                               "lam": lam, "lam_low": low, "lam_high": high}))
        return
    for e in found:
        click.echo(f"{e.source}:\n{_rerun_text(e).split(chr(10), 1)[1].rsplit(chr(10), 1)[0]}")
    if lam is None:
        click.echo("no original/copy race in a job large enough to fit: lam not estimated")
    else:
        click.echo(f"pooled over {len(used)} trace(s): lam {lam:g} (95% likelihood "
                   f"interval {low:g}-{high:g})")
