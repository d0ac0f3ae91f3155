"""Load a task history from wherever it lives, detecting the format.

- ``http://`` / ``https://`` URL: the JobHistory Server REST API (``hedge.nodes.rest``).
- a file whose first line is ``job,task,attempt,node,start,end,state``: the plain CSV.
- anything else (``.jhist``, Rumen JSON, Google 2011 ``task_events``): the shared trace
  readers, ``hedge.traces.read_attempts``, which detect those formats themselves.

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
