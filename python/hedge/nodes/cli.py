"""``hedge nodes``: rank nodes, train/apply the ML-NA predictor, publish the blacklist.

HISTORY is one or more of: a CSV task history (``job,task,attempt,node,start,end,state``),
a ``.jhist``, Rumen JSON or Google 2011 ``task_events`` file (detected from the file), a
directory of such files (e.g. one .jhist per job), or a JobHistory Server URL such as
``http://historyserver:19888``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import click

from hedge.errors import HedgeError

_history = click.argument("history", nargs=-1, required=True)
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
_by_type = click.option("--by-type", is_flag=True,
                        help="Normalise durations within (job, MAP/REDUCE) instead of job.")
_since = click.option("--since", type=float, default=None,
                      help="History Server only: jobs started at or after this epoch second "
                           "(default: 30 days ago).")


def _load(history: tuple[str, ...], since: float | None):
    from hedge.nodes.sources import load_histories

    return load_histories(list(history), since=since)


def _print_json(doc: object) -> None:
    click.echo(json.dumps(doc, indent=1))


@click.group("nodes")
def nodes() -> None:
    """Node performance: ranking, weak-node prediction, blacklisting."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")


@nodes.command()
@_history
@_json
@_by_type
@_since
@click.option("--method", type=click.Choice(["band", "mean-ci", "loglogistic"]),
              default="mean-ci", show_default=True,
              help="Per-node interval: empirical 2.5-97.5% band, 95% CI of the mean, or "
                   "fitted 3-parameter log-logistic quantiles.")
@click.option("--min-tasks", type=int, default=3, show_default=True,
              help="Nodes with fewer normalised durations are not ranked.")
@click.option("--weak", "weak_policy", type=click.Choice(["level0", "top-k-std", "auto"]),
              default="auto", show_default=True, help="Which nodes count as weak.")
@click.option("-k", type=int, default=5, show_default=True, help="k for top-k-std / auto.")
@click.option("--halves", is_flag=True,
              help="Also rank the two halves of the trace and report rank stability.")
def rank(history: tuple[str, ...], as_json: bool, by_type: bool, since: float | None, method: str,
         min_tasks: int, weak_policy: str, k: int, halves: bool) -> None:
    """Level per node (0 = weakest), interval, mean and std of normalised durations."""
    from hedge.nodes.normalize import normalize
    from hedge.nodes.ranking import rank_nodes, select_weak
    from hedge.nodes.stability import half_stability

    data = normalize(_load(history, since), by_type=by_type)
    if data.n_nodes == 0:
        raise HedgeError(f"{' '.join(history)}: no successful attempts in jobs with more than one task; "
                         "nothing to rank")
    ranking = rank_nodes(data, method=method, min_tasks=min_tasks)
    weak = [str(n) for n in select_weak(ranking, weak_policy, k)]
    doc: dict[str, object] = {
        "source": list(history), "method": method, "attempts": len(data.z),
        "dropped_single_task_jobs": data.dropped_single,
        "level_sizes": ranking.level_sizes(), "weak": weak, "nodes": ranking.rows()}
    if halves:
        doc["halves"] = half_stability(data, method=method, min_tasks=min_tasks).summary()
    if as_json:
        _print_json(doc)
        return
    click.echo(f"{'level':>5} {'node':<40} {'tasks':>6} {'mean':>8} {'std':>8} "
               f"{'lo':>8} {'hi':>8}")
    for row in doc["nodes"]:  # type: ignore[union-attr]
        cells = [f"{row[c]:8.3f}" if row[c] is not None else f"{'-':>8}"
                 for c in ("mean", "std", "lo", "hi")]
        click.echo(f"{row['level']:>5} {row['node']:<40} {row['count']:>6} {' '.join(cells)}")
    click.echo(f"level sizes (-1 = unranked): {doc['level_sizes']}")
    click.echo(f"weak ({weak_policy}): {', '.join(weak) or '(none)'}  [weak: level 0 and "
               "reliably slower than some node; nodes that do not differ give none]")
    if halves:
        click.echo(f"halves: {doc['halves']}")


def _mlna_options(f):
    f = click.option("--period-days", type=int, default=30, show_default=True,
                     help="Days per ML-NA period (features are 3 x this).")(f)
    f = click.option("--day-seconds", type=float, default=86400.0, show_default=True,
                     help="Length of a 'day' in seconds (shorten for small traces).")(f)
    f = click.option("--window", type=int, default=6, show_default=True,
                     help="Past period pairs in the sliding training window.")(f)
    f = click.option("--n-estimators", type=int, default=100, show_default=True,
                     help="Boosting rounds.")(f)
    return f


@nodes.command()
@_history
@_by_type
@_since
@_mlna_options
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the model.")
def train(history: tuple[str, ...], by_type: bool, since: float | None, period_days: int,
          day_seconds: float, window: int, n_estimators: int, output: str) -> None:
    """Train the ML-NA weak-node predictor (XGBoost) on a task history."""
    from hedge.nodes.mlna import MLNA, MLNAParams

    params = MLNAParams(period_days=period_days, day_seconds=day_seconds, window=window,
                        by_type=by_type, n_estimators=n_estimators)
    model = MLNA(params).fit(_load(history, since))
    model.save(output)
    click.echo(f"model written to {output}")


@nodes.command()
@_history
@_json
@_since
@click.option("--model", "model_path", required=True, type=click.Path(dir_okay=False),
              help="A model written by 'hedge nodes train'.")
@click.option("--threshold", type=float, default=0.5, show_default=True,
              help="Probability at which a node is reported weak.")
def predict(history: tuple[str, ...], as_json: bool, since: float | None, model_path: str,
            threshold: float) -> None:
    """Probability per node of being weak in the next period."""
    from hedge.nodes.mlna import MLNA

    model = MLNA.load(model_path)
    prediction = model.predict_next(_load(history, since))
    rows = prediction.rows()
    weak = [str(n) for n in prediction.weak(threshold)]
    if as_json:
        _print_json({"source": list(history), "model": model_path,
                     "period_start": prediction.period_start, "threshold": threshold,
                     "weak": weak, "nodes": rows})
        return
    click.echo(f"{'p_weak':>8}  node")
    for row in rows:
        click.echo(f"{row['p_weak']:8.4f}  {row['node']}")
    click.echo(f"weak (p >= {threshold}): {', '.join(weak) or '(none)'}")


@nodes.command()
@_history
@_by_type
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Blacklist file the NodeManager health script reads.")
@click.option("--status", type=click.Path(dir_okay=False), default=None,
              help="JSON status for the control plane (default: OUT.json).")
@click.option("--interval", type=float, default=300.0, show_default=True,
              help="Seconds between rounds.")
@click.option("--iterations", type=int, default=None, help="Stop after this many rounds.")
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None,
              help="Use an ML-NA model's predictions instead of interval ranking.")
@click.option("--threshold", type=float, default=0.5, show_default=True)
@click.option("--method", type=click.Choice(["band", "mean-ci", "loglogistic"]),
              default="mean-ci", show_default=True)
@click.option("--weak", "weak_policy", type=click.Choice(["level0", "top-k-std", "auto"]),
              default="auto", show_default=True)
@click.option("-k", type=int, default=5, show_default=True)
@click.option("--max-fraction", type=float, default=0.1, show_default=True,
              help="Never blacklist more than this fraction of the nodes.")
@click.option("--min-dwell", type=float, default=3600.0, show_default=True,
              help="Seconds a node stays listed (or unlisted) after a change.")
@click.option("--lookback", type=float, default=None,
              help="History Server window in seconds before now (default: 30 days for "
                   "ranking, two periods of the model for ML-NA).")
@click.option("--nodes", "nodes_file", type=click.Path(dir_okay=False), default=None,
              help="File of the cluster's host names (one per line): other names are "
                   "never published, and the cap counts these nodes.")
def watch(history: tuple[str, ...], by_type: bool, out: str, status: str | None, interval: float,
          iterations: int | None, model_path: str | None, threshold: float, method: str,
          weak_policy: str, k: int, max_fraction: float, min_dwell: float,
          lookback: float | None, nodes_file: str | None) -> None:
    """Recompute weak nodes every interval and publish the blacklist (NEPAB)."""
    from hedge.nodes.blacklist import Blacklister, read_blacklist
    from hedge.nodes.mlna import MLNA
    from hedge.nodes.watch import Watcher

    if interval <= 0:
        raise HedgeError(f"--interval = {interval}: expected seconds > 0")
    model = MLNA.load(model_path) if model_path else None
    if lookback is None:
        lookback = (2 * model.params.period_days * model.params.day_seconds if model
                    else 30 * 86400.0)
    watcher = Watcher(
        source=list(history), out=Path(out), status=Path(status or f"{out}.json"),
        blacklister=Blacklister(max_fraction=max_fraction, min_dwell=min_dwell),
        model=model, method=method,
        weak_policy=weak_policy, k=k, threshold=threshold, lookback=lookback,
        by_type=by_type,
        known_nodes=frozenset(read_blacklist(nodes_file)) if nodes_file else None)
    watcher.run(interval, iterations)
