"""``hedge plan``: deadline-aware speculation planning (Chronos) and replication planning."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hedge.errors import HedgeError

# the models (numpy, scipy) are imported by the commands that run them: a command's --help
# needs none of them
if TYPE_CHECKING:
    import numpy as np


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Right-aligned plain-text table (first column left-aligned)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


@click.group("plan")
def plan() -> None:
    """Plan speculation: Chronos r per strategy, single-fork replication (p, r, keep|kill)."""


@plan.command("chronos")
@click.option("--tasks", "n_tasks", type=int, default=None,
              help="Tasks in the job (N; default: the --job's task count).")
@click.option("--deadline", type=float, required=True, help="Deadline D (s from job start).")
@click.option("--tmin", "t_min", type=float, default=None,
              help="Pareto minimum run time (default: fitted to --trace).")
@click.option("--beta", type=float, default=None,
              help="Pareto tail index (default: fitted to --trace).")
@click.option("--trace", "trace_path", type=click.Path(path_type=Path), default=None,
              help="Fit t_min and beta (MLE) to durations from a trace or a plain list.")
@click.option("--job", default=None, help="With --trace: fit to this job's durations.")
@click.option("--theta", type=float, default=1e-3, show_default=True,
              help="Weight of cost against log(PoCD - R_min).")
@click.option("--price", type=float, default=1.0, show_default=True,
              help="Price per unit of machine time.")
@click.option("--r-min", type=float, default=0.0, show_default=True, help="Minimum PoCD.")
@click.option("--tau-est", type=float, default=None,
              help="Straggler detection time (default min(0.1 D, D - tmin)).")
@click.option("--tau-kill", type=float, default=None,
              help="Time extra attempts are killed (default: tau_est + min(tau_est, "
                   "tmin (1 - tau_est/D))).")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None,
              help="Also write the inputs, the fit and every strategy's row as JSON.")
def plan_chronos(n_tasks: int | None, deadline: float, t_min: float | None,
                 beta: float | None, trace_path: Path | None, job: str | None, theta: float,
                 price: float, r_min: float, tau_est: float | None,
                 tau_kill: float | None, json_path: Path | None) -> None:
    """Optimal extra attempts r, PoCD, expected cost and utility per Chronos strategy.

    Attempts are modelled as iid Pareto(tmin, beta), given or fitted to --trace; the
    utility is log(PoCD - R_min) - theta * price * E[machine time].
    """
    from hedge.analysis import chronos
    from hedge.analysis.fitting import TailWarning, durations, fit_pareto

    fitted = None
    if trace_path is not None:
        samples, job_size, what = _durations(trace_path, job)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TailWarning)
            fit = fit_pareto(durations(samples, str(trace_path)))
        t_min = fit.t_min if t_min is None else t_min
        beta = fit.beta if beta is None else beta
        n_tasks = job_size if n_tasks is None else n_tasks
        caveat = "NOT Pareto-like: treat the table with caution" if caught else None
        fitted = {"source": what, **_fit_dict(fit), "caveat": caveat}
        click.echo(f"fitted to {what}: Pareto(t_min = {fit.t_min:.4g}, beta = {fit.beta:.4g}), "
                   f"KS D = {fit.ks_statistic:.3g} (p = {fit.p_value:.2g})"
                   + (f"; {caveat}" if caveat else ""))
    elif job is not None:
        raise HedgeError("--job needs --trace")
    for name, value in (("--tasks", n_tasks), ("--tmin", t_min), ("--beta", beta)):
        if value is None:
            raise HedgeError(f"{name}: required (or give --trace [--job] to fit it)")
    te, tk = chronos.default_taus(deadline, t_min, tau_est) if deadline > t_min else (0, 0)
    tk = tk if tau_kill is None else tau_kill
    rows, notes, records = [], [], []
    for strategy in chronos.STRATEGIES:
        try:
            r, pocd, machine, utility = chronos.optimal_r(
                strategy, n_tasks, deadline, t_min, beta, te, tk, theta=theta, price=price,
                r_min=r_min)
        except HedgeError as exc:
            if "not reachable" not in str(exc) and "infinite" not in str(exc):
                raise
            rows.append([strategy, "-", "-", "-", "-", "-"])
            notes.append(f"{strategy}: {exc}")
            records.append({"strategy": strategy, "r": None, "pocd": None,
                            "machine_time": None, "cost": None, "utility": None,
                            "note": str(exc)})
            continue
        rows.append([strategy, str(r), f"{pocd:.6f}", f"{machine:.6g}", f"{price * machine:.6g}",
                     f"{utility:.6g}"])
        records.append({"strategy": strategy, "r": int(r), "pocd": float(pocd),
                        "machine_time": float(machine), "cost": float(price * machine),
                        "utility": float(utility), "note": None})
    click.echo(f"N = {n_tasks}, D = {deadline:g}, Pareto(t_min = {t_min:g}, beta = {beta:g}), "
               f"tau_est = {te:g}, tau_kill = {tk:g}, theta = {theta:g}, price = {price:g}, "
               f"R_min = {r_min:g}")
    click.echo(_table(["strategy", "r", "PoCD", "E[machine time]", "E[cost]", "utility"], rows))
    for note in notes:
        click.echo(note)
    if json_path is not None:
        inputs = {"tasks": n_tasks, "deadline": deadline, "t_min": t_min, "beta": beta,
                  "tau_est": te, "tau_kill": tk, "theta": theta, "price": price, "r_min": r_min}
        _write_json(json_path, {"inputs": inputs, "fit": fitted, "strategies": records})


def _fit_dict(fit) -> dict[str, float]:
    return {"t_min": float(fit.t_min), "beta": float(fit.beta),
            "ks_statistic": float(fit.ks_statistic), "p_value": float(fit.p_value)}


def _write_json(path: Path, payload: dict) -> None:
    """``payload`` as JSON at ``path`` (non-finite numbers as null), written whole."""
    text = json.dumps(_finite(payload), indent=2) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _plain_durations(path: Path) -> np.ndarray:
    """Durations from a text/CSV file: numbers separated by commas, spaces or newlines; an
    optional non-numeric header line; '#' comments."""
    import numpy as np

    values: list[float] = []
    for number, raw in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        text = raw.split("#", 1)[0].replace(",", " ").split()
        try:
            values.extend(float(word) for word in text)
        except ValueError:
            if values or number > 1:
                raise HedgeError(f"{path}:{number}: {raw.strip()[:60]!r} is not a list of "
                                 "durations (numbers, one or more per line)") from None
    return np.asarray(values)


def _durations(path: Path, job: str | None,
               drop_negative: bool = False) -> tuple[np.ndarray, int | None, str]:
    """(durations, the job's task count or None, description) from a trace or a plain list."""
    import numpy as np

    from hedge import traces
    from hedge.analysis.fitting import job_durations

    try:
        traces.detect(path)
    except HedgeError as detect_error:
        if not path.is_file():
            raise
        plain = _plain_durations(path)
        if len(plain) == 0:
            raise detect_error from None
        if job is not None:
            raise HedgeError(f"{path}: a plain list of durations has no jobs; drop --job "
                             f"'{job}'") from None
        return plain, None, f"{path} ({len(plain)} durations)"
    by_job = job_durations(traces.load(path, **({"negative": "drop"} if drop_negative
                                                else {})))
    if job is None:
        pooled = np.concatenate(list(by_job.values())) if by_job else np.empty(0)
        return pooled, None, f"{path} (all {len(by_job)} jobs, {len(pooled)} tasks)"
    if job not in by_job:
        some = ", ".join(list(by_job)[:5])
        raise HedgeError(f"{path}: no job '{job}' with durations (jobs include: {some})")
    return by_job[job], len(by_job[job]), f"{path} job {job} ({len(by_job[job])} tasks)"


@plan.command("replicate")
@click.option("--trace", "trace_path", type=click.Path(path_type=Path), required=True,
              help="A task trace (any format hedge reads) or a plain text/CSV list of durations.")
@click.option("--job", default=None, help="Use this job's durations (default: all tasks).")
@click.option("--tasks", "n_tasks", type=int, default=None,
              help="Tasks in the job to plan (n; default: the --job's task count).")
@click.option("--cost-weight", type=float, required=True, help="lambda in J = E[T] + lambda E[C]/n.")
@click.option("--top", type=int, default=5, show_default=True, help="Candidates to list.")
@click.option("--drop-negative", is_flag=True,
              help="Skip trace rows with a negative duration instead of failing.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None,
              help="Also write the fit, its caveat and every plan as JSON.")
def plan_replicate(trace_path: Path, job: str | None, n_tasks: int | None, cost_weight: float,
                   top: int, drop_negative: bool, json_path: Path | None) -> None:
    """Best single-fork replication (p, r, keep|kill) from the empirical duration distribution."""
    import numpy as np

    from hedge.analysis import replication
    from hedge.analysis.fitting import Empirical, TailWarning, fit_pareto

    samples, job_size, what = _durations(trace_path, job, drop_negative)
    n = n_tasks if n_tasks is not None else job_size
    if n is None:
        raise HedgeError("--tasks: the number of tasks to plan for is needed without --job")
    dist = Empirical.of(samples, what=str(trace_path))
    plans = replication.search(dist, n, cost_weight)
    hadoop_p, hadoop_r, hadoop_keep = replication.HADOOP_DEFAULT
    # None when no duration exceeds the 90th percentile: a kept copy has nothing to race
    hadoop = next((pl for pl in replication.search(dist, n, cost_weight, (hadoop_p,),
                                                   (hadoop_r,)) if pl.keep == hadoop_keep), None)
    none_t, none_c = replication.no_replication(dist, n)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TailWarning)
        fit = fit_pareto(samples) if len(np.unique(samples)) > 1 else None

    # (name, p, r, mode, E[T], E[C]/n) per listed plan; p and mode None for no replication
    entries = [("best" if i == 0 else f"#{i + 1}", pl.p, pl.r, pl.mode, pl.latency,
                pl.cost_per_task) for i, pl in enumerate(plans[:max(top, 1)])]
    entries.append(("no replication", None, 0, None, none_t, none_c))
    if hadoop is not None:
        entries.append(("hadoop default", hadoop.p, hadoop.r, hadoop.mode, hadoop.latency,
                        hadoop.cost_per_task))
    rows = [[name, "-" if p is None else f"{p:g}", str(r), mode or "-", f"{latency:.6g}",
             f"{cost:.6g}", f"{cost * n:.6g}", f"{latency + cost_weight * cost:.6g}"]
            for name, p, r, mode, latency, cost in entries]
    click.echo(f"{what}; n = {n}, lambda = {cost_weight:g}; J = E[T] + lambda E[C]/n "
               f"(hadoop default ~ one kept copy for 10% of tasks)")
    # the fit's verdict comes before the plans: a caveat read after "best" is read too late
    verdict = None if fit is None else (
        "Pareto-like" if not caught else "NOT Pareto-like (closed forms unreliable)")
    if fit is not None:
        click.echo(f"Pareto fit: t_min = {fit.t_min:.4g}, beta = {fit.beta:.3g}, KS D = "
                   f"{fit.ks_statistic:.3g} (p = {fit.p_value:.2g}): {verdict}")
    if hadoop is None:
        click.echo(f"hadoop default: not listed: it keeps a copy beside tasks longer than the "
                   f"{100 * (1 - hadoop_p):g}th percentile, and no duration exceeds it")
    header = ["policy", "p", "r", "mode", "E[T]", "E[C]/n", "E[C]", "J"]
    click.echo(_table(header, rows))
    if json_path is not None:
        plans_out = [{"name": name, "p": p, "r": int(r), "mode": mode, "latency": latency,
                      "cost_per_task": cost, "cost": cost * n,
                      "objective": latency + cost_weight * cost}
                     for name, p, r, mode, latency, cost in entries]
        _write_json(json_path, {
            "source": what, "tasks": n, "cost_weight": cost_weight,
            "fit": None if fit is None else {**_fit_dict(fit), "verdict": verdict,
                                             "pareto_like": not caught},
            "plans": plans_out})
