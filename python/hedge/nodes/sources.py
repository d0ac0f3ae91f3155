"""Load a task history from wherever it lives, detecting the format.

- ``http://`` / ``https://`` URL: the JobHistory Server REST API (``hedge.nodes.rest``).
- a file whose first line is ``job,task,attempt,node,start,end,state``: the plain CSV.
- anything else (``.jhist``, Rumen JSON, Google 2011 ``task_events``, Spark event logs):
  the shared trace readers, ``hedge.traces.read_attempts``, which detect those formats
  themselves.

Whatever the source, the result is validated against ``HISTORY_SCHEMA``.
"""

from __future__ import annotations

import importlib
import logging
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from hedge.errors import HedgeError
from hedge.nodes.history import (
    HISTORY_SCHEMA,
    looks_like_csv_history,
    make_history,
    read_csv_history,
)
from hedge.traces.spark import is_rolling_dir

log = logging.getLogger(__name__)

DEFAULT_LOOKBACK = 30 * 86400.0  # History Server: fetch the last 30 days by default


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def load_history(source: str | Path, since: float | None = None, until: float | None = None,
                 timeout: float = 10.0, retries: int = 4) -> pa.Table:
    """The task history at ``source``.

    ``since``/``until`` (epoch seconds) bound a History Server fetch: jobs started in
    ``[since, until)``; the defaults are the last ``DEFAULT_LOOKBACK`` seconds up to now.
    """
    text = str(source)
    if is_url(text):
        from hedge.nodes.rest import HistoryServerClient

        client = HistoryServerClient(text, timeout=timeout, retries=retries)
        until = time.time() if until is None else until
        return client.fetch(until - DEFAULT_LOOKBACK if since is None else since, until)
    path = Path(text)
    if not path.exists():
        raise HedgeError(f"{path}: no such file (expected a task history file or a "
                         "History Server URL)")
    if path.is_file() and looks_like_csv_history(path):
        return read_csv_history(path)
    return from_trace_attempts(_read_attempts(path), str(path))


def expand_sources(sources: list[str]) -> list[str]:
    """URLs and files as given; a directory becomes its (non-hidden) files, sorted, except
    a Spark rolling event log's directory, which is one log."""
    out: list[str] = []
    for source in sources:
        path = Path(source)
        if not is_url(source) and path.is_dir() and not is_rolling_dir(path):
            files = sorted(str(p) for p in path.iterdir()
                           if p.is_file() and not p.name.startswith("."))
            if not files:
                raise HedgeError(f"{path}: directory holds no history files")
            out.extend(files)
        else:
            out.append(source)
    return out


def load_histories(sources: list[str], since: float | None = None,
                   until: float | None = None) -> pa.Table:
    """Several histories (files, directories such as one ``.jhist`` per job, URLs) as one.

    Job ids are kept when they are unique across sources (one .jhist per job); when two
    sources share an attempt id of the same job (e.g. test traces that reuse job ids), every
    job id is prefixed with its source's file name so the jobs stay apart.
    """
    expanded = expand_sources(sources)
    if not expanded:
        raise HedgeError("no history given")
    tables = [load_history(s, since=since, until=until) for s in expanded]
    if len(tables) == 1:
        return tables[0]
    merged = pa.concat_tables(tables)
    keys = pc.binary_join_element_wise(merged.column("job"), merged.column("attempt"), "\x00")
    if len(pc.unique(keys)) == merged.num_rows:
        return merged
    log.info("job ids repeat across %d sources: prefixing them with the source name",
             len(tables))
    prefixed = [t.set_column(0, "job", pc.binary_join_element_wise(
        pa.scalar(Path(s).name), t.column("job"), ":")) for s, t in zip(expanded, tables,
                                                                         strict=True)]
    return pa.concat_tables(prefixed)


def _read_attempts(path: Path) -> pa.Table:
    try:
        traces = importlib.import_module("hedge.traces")
        reader = traces.read_attempts
    except (ImportError, AttributeError) as exc:
        raise HedgeError(f"{path}: not a CSV task history, and the trace readers "
                         "(hedge.traces.read_attempts) are not available") from exc
    return reader(path)


def from_trace_attempts(table: pa.Table, source: str) -> pa.Table:
    """Convert a ``hedge.traces.read_attempts`` table into a validated history table.

    Node ids are turned into strings (Google machine ids are integers). Attempts without a
    node (the trace never said where they ran) are left out with a warning: they say
    nothing about any node.
    """
    missing = [c for c in HISTORY_SCHEMA.names if c not in table.column_names]
    if not missing:
        nodeless = pc.equal(pc.utf8_length(table.column("node").cast(pa.string())), 0)
        dropped = pc.sum(nodeless.cast(pa.int64())).as_py() or 0
        if dropped:
            log.warning("%s: left out %d attempt(s) without a node", source, dropped)
            table = table.filter(pc.invert(nodeless))
    if missing:
        raise HedgeError(f"{source}: attempt table lacks columns {missing}")
    columns = {}
    for name, kind in zip(HISTORY_SCHEMA.names, HISTORY_SCHEMA.types, strict=True):
        column = table.column(name)
        try:
            columns[name] = column.cast(kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise HedgeError(f"{source}: column '{name}' ({column.type}) cannot be read as "
                             f"{kind}: {exc}") from exc
    return make_history(columns, source=source)
