"""``hedge imkp build | show | lookup``: ImKP mappings from the command line."""

from __future__ import annotations

import atexit
import gc
import json
import os
import sys


def _numpy_with_one_blas_thread() -> None:
    """Import numpy with OpenBLAS's thread pool at one thread, unless told otherwise.

    Nothing ``hedge imkp`` runs calls BLAS, but the OpenBLAS numpy links starts a thread per
    core when it loads, and starting them costs 0.05-0.09 s of CPU, a sixth of a small
    build's start-up (issue 21). OpenBLAS reads the variable once, as it loads; it is removed
    again at once, so child processes (Spark's workers) see the environment as it was. No
    effect when numpy is already imported (a caller running the command in-process) or when
    the user set OPENBLAS_NUM_THREADS.
    """
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


_numpy_with_one_blas_thread()

import click  # noqa: E402
import numpy as np  # noqa: E402

from hedge.imkp.build import (  # noqa: E402
    DEFAULT_BLOCK,
    DEFAULT_HEAVY_KEYS,
    DEFAULT_MAX_KEYS,
    DEFAULT_SCALE,
    BuildSettings,
    build_to_file,
)
from hedge.imkp.mapfile import Mapping, read_mapping  # noqa: E402


def heaviest_note(mapping: Mapping) -> str | None:
    """What is known of the heaviest key when its exact count was not kept (else None)."""
    if not mapping.heaviest_is_bound:
        return None
    return (f"no key has more than {mapping.heaviest_key_count} records (exact count not "
            "kept: --max-keys overflowed)")


def summary(mapping: Mapping) -> dict:
    """Predicted balance: loads per reducer, CV, max/mean, max/LB (the ``--json`` payload).

    ``heaviest_key_count`` is null when only a bound is known (``heaviest_key_at_most``,
    explained by ``heaviest_key_note``), so no reader takes the bound for the count."""
    loads = mapping.loads
    mean = float(loads.mean())
    bound = mapping.heaviest_is_bound
    return {
        "reducers": mapping.reducers,
        "groups": mapping.groups,
        "scale": mapping.scale,
        "heavy_keys": len(mapping.heavy_keys),
        "loads": loads.tolist(),
        "total": mapping.total,
        "heaviest_key_count": None if bound else mapping.heaviest_key_count,
        "heaviest_key_exact": not bound,
        "heaviest_key_at_most": mapping.heaviest_key_count,
        "heaviest_key_note": heaviest_note(mapping),
        "lower_bound": mapping.lower_bound,
        "cv": float(loads.std() / mean) if mean else 0.0,
        "max_over_mean": float(loads.max() / mean) if mean else 0.0,
        "max_over_lb": float(loads.max() / mapping.lower_bound) if mapping.lower_bound else 0.0,
    }


def print_summary(mapping: Mapping) -> None:
    s = summary(mapping)
    click.echo(f"reducers R       {s['reducers']}")
    click.echo(f"groups G         {s['groups']} (scale {s['scale']})")
    click.echo(f"heavy keys       {s['heavy_keys']}")
    click.echo(f"records          {s['total']}")
    if s["heaviest_key_exact"]:
        click.echo(f"heaviest key     {s['heaviest_key_count']}")
        click.echo(f"lower bound LB   {s['lower_bound']}  (max(ceil(total/R), heaviest key))")
    else:
        click.echo(f"heaviest key     {s['heaviest_key_note']}")
        click.echo(f"lower bound LB   {s['lower_bound']}  (ceil(total/R), above any key)")
    click.echo(f"CV               {s['cv']:.4f}")
    click.echo(f"max/mean         {s['max_over_mean']:.4f}")
    click.echo(f"max/LB           {s['max_over_lb']:.4f}")
    click.echo("loads            " + " ".join(str(x) for x in s["loads"]))


@click.group("imkp")
def imkp() -> None:
    """ImKP: balance reducer input by pre-counting keys (build, show, lookup mappings)."""


@imkp.command("build")
@click.argument("inputs", nargs=-1, required=True)
@click.option("-r", "--reducers", type=int, required=True, help="Number of reduce tasks R.")
@click.option("--scale", type=int, default=DEFAULT_SCALE, show_default=True,
              help="Groups per reducer (G = R x scale).")
@click.option("--key", "key", default="words", show_default=True,
              help="Key rule: words | tsv:N | csv:NAME | parquet:NAME | py:module:function.")
@click.option("--heavy-keys", type=int, default=DEFAULT_HEAVY_KEYS, show_default=True,
              help="Most keys placed individually (0 = groups only).")
@click.option("-o", "--output", required=True, help="Mapping file to write.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
              show_default=True, help="Count on this machine or as a PySpark job.")
@click.option("--spark-master", metavar="URL", default=None,
              help="With --engine spark: where Spark runs. Default local[THREADS]; 'yarn' "
                   "submits a client-mode application to the cluster that HADOOP_CONF_DIR (or "
                   "YARN_CONF_DIR) describes, as spark-submit --master yarn; also spark://, "
                   "k8s://. Executors run PYSPARK_PYTHON (default: this Python, which every "
                   "node must see; else ship a venv with --spark-conf spark.archives=...). "
                   "Local inputs are read as file:// paths every executor must see; put "
                   "them on HDFS otherwise.")
@click.option("--spark-conf", "spark_conf", metavar="KEY=VALUE", multiple=True,
              help="With --engine spark: a SparkConf setting, as spark-submit --conf "
                   "(repeatable; e.g. spark.executor.instances=2, spark.executor.memory=1g, "
                   "spark.yarn.archive=hdfs:///spark/jars.zip to skip uploading Spark's "
                   "jars). SPARK_HOME, and spark-defaults.conf in SPARK_CONF_DIR but for its "
                   "spark.master, are honoured as by spark-submit.")
@click.option("--threads", type=int, default=BuildSettings.threads, show_default=True,
              help="Worker threads extracting and counting keys.")
@click.option("--block-size", type=int, default=DEFAULT_BLOCK, show_default=True,
              help="Bytes read per piece.")
@click.option("--max-keys", type=int, default=DEFAULT_MAX_KEYS, show_default=True,
              help="Distinct keys held in memory before switching to a heavy-hitter sketch.")
@click.option("--webhdfs-url", default=None, help="WebHDFS endpoint for hdfs:// inputs.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar with bytes/s (default: when stderr is a terminal).")
def build_cmd(inputs: tuple[str, ...], reducers: int, scale: int, key: str, heavy_keys: int,
              output: str, engine: str, spark_master: str | None, spark_conf: tuple[str, ...],
              threads: int, block_size: int, max_keys: int, webhdfs_url: str | None,
              progress: bool | None) -> None:
    """Count the keys of INPUTS (files, folders, globs, hdfs://, webhdfs://) and write a mapping."""
    # The interpreter's shutdown collects every object it still tracks, several times over;
    # with numba loaded (no ahead-of-time word count, hedge.imkp.wordtable), its type
    # registries make that about 0.25 s of CPU, a quarter of a small build's.
    # Frozen objects are skipped (the process's memory goes back to the system at exit
    # anyway); at exit, so a caller that runs this command in-process keeps collecting.
    atexit.register(gc.freeze)
    pairs = []
    for item in spark_conf:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint="--spark-conf")
        pairs.append((name.strip(), value))
    settings = BuildSettings(
        reducers=reducers, scale=scale, key=key, heavy_keys=heavy_keys, threads=max(1, threads),
        block_size=max(1 << 16, block_size), max_keys=max_keys, webhdfs_url=webhdfs_url,
        progress=sys.stderr.isatty() if progress is None else progress, engine=engine,
        spark_master=spark_master, spark_conf=tuple(pairs))
    mapping = build_to_file(list(inputs), settings, output)
    click.echo(f"wrote {output}")
    print_summary(mapping)


@imkp.command("show")
@click.argument("mapping")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def show_cmd(mapping: str, as_json: bool) -> None:
    """Print R, G, loads per reducer and the predicted skew of MAPPING."""
    loaded = read_mapping(mapping)
    if as_json:
        click.echo(json.dumps(summary(loaded)))
    else:
        print_summary(loaded)


@imkp.command("lookup")
@click.argument("mapping")
@click.argument("keys", nargs=-1, required=True)
def lookup_cmd(mapping: str, keys: tuple[str, ...]) -> None:
    """Print KEY<TAB>reducer for each KEY (or each line of standard input with '-')."""
    import pyarrow as pa

    loaded = read_mapping(mapping)
    if keys == ("-",):
        text = sys.stdin.buffer.read().decode("utf-8", errors="strict")
        names = [line.removesuffix("\r") for line in text.split("\n")]
        if names and names[-1] == "":
            names.pop()
    else:
        names = list(keys)
    reducers = loaded.reducers_of(pa.array(names, type=pa.string())) if names else np.zeros(0)
    click.echo("".join(f"{k}\t{int(r)}\n" for k, r in zip(names, reducers, strict=True)), nl=False)
