"""Task history from the MapReduce JobHistory Server REST API.

Endpoints (Hadoop "MapReduce History Server REST APIs"):

    GET /ws/v1/history/mapreduce/jobs?startedTimeBegin=ms&startedTimeEnd=ms
        -> {"jobs": {"job": [{"id", "startTime", "finishTime", "state", ...}]}}
    GET /ws/v1/history/mapreduce/jobs/{job}/tasks
        -> {"tasks": {"task": [{"id", "type", "state", ...}]}}
    GET /ws/v1/history/mapreduce/jobs/{job}/tasks/{task}/attempts
        -> {"taskAttempts": {"taskAttempt": [{"id", "startTime", "finishTime",
                                              "nodeHttpAddress", "state", "type"}]}}

Times are milliseconds since the epoch; the table holds seconds. Jobs are listed one time
window at a time (``window`` seconds of start time per request) so a long history is never
one huge response. Each request has a timeout and is retried with exponential back-off on
connection errors, timeouts, 429 and 5xx; any other failure (or retries exhausted) raises
HedgeError for the whole fetch: the client never returns a partial history, so a caller such
as the blacklist watcher can keep its last good result instead.

Attempts that never got a container (empty ``nodeHttpAddress``) or never finished
(``finishTime`` <= 0, or a state other than SUCCEEDED/KILLED/FAILED) ran on no node and are
left out, as are attempts whose finish time is before their start (a clock problem on one
record should not stop the whole fetch; it is logged); ``HistoryServerClient.skipped``
counts them. Speculative copies are inferred from overlapping attempts of a task
(``hedge.nodes.history.infer_speculative``): the REST API does not flag them.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import requests

from hedge.errors import HedgeError
from hedge.nodes.history import STATES, make_history

log = logging.getLogger(__name__)

API = "/ws/v1/history/mapreduce"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass
class HistoryServerClient:
    """Fetches finished attempts of jobs started in ``[since, until)`` (epoch seconds).

    ``base_url`` is the History Server web address, e.g. ``http://historyserver:19888``.
    """

    base_url: str
    timeout: float = 10.0
    retries: int = 4
    backoff: float = 0.5
    window: float = 3600.0
    session: requests.Session = field(default_factory=requests.Session)
    skipped: int = 0

    def fetch(self, since: float, until: float | None = None) -> pa.Table:
        """All attempts of the jobs whose start time lies in ``[since, until)``."""
        until = time.time() if until is None else until
        if not until > since:
            raise HedgeError(f"History Server fetch: until={until} must be after since={since}")
        self.skipped = 0
        rows: dict[str, list[Any]] = {k: [] for k in
                                      ("job", "task", "attempt", "node", "type", "start",
                                       "end", "state")}
        for job in self.jobs(since, until):
            for task in self._list(f"{API}/jobs/{job}/tasks", "tasks", "task"):
                task_id = _field(task, "id", str, f"job {job} task")
                attempts = self._list(f"{API}/jobs/{job}/tasks/{task_id}/attempts",
                                      "taskAttempts", "taskAttempt")
                for attempt in attempts:
                    self._add(rows, job, task_id, attempt)
        if self.skipped:
            log.info("History Server: left out %d attempts with no node or no finish time",
                     self.skipped)
        return make_history({
            **{k: rows[k] for k in ("job", "task", "attempt", "node", "type", "state")},
            "start": np.asarray(rows["start"], dtype=float),
            "end": np.asarray(rows["end"], dtype=float),
        }, source=self.base_url)

    def jobs(self, since: float, until: float) -> list[str]:
        """Ids of jobs started in ``[since, until)``, one request per time window."""
        ids: list[str] = []
        begin = since
        while begin < until:
            end = min(begin + self.window, until)
            params = {"startedTimeBegin": int(begin * 1000), "startedTimeEnd": int(end * 1000) - 1}
            for job in self._list(f"{API}/jobs", "jobs", "job", params):
                ids.append(_field(job, "id", str, "job"))
            begin = end
        return list(dict.fromkeys(ids))  # windows are disjoint; dedupe defensively

    def _add(self, rows: dict[str, list[Any]], job: str, task: str,
             attempt: dict[str, Any]) -> None:
        where = f"job {job} task {task} attempt"
        node = str(attempt.get("nodeHttpAddress") or "")
        finish = _field(attempt, "finishTime", (int, float), where)
        state = _field(attempt, "state", str, where)
        start = _field(attempt, "startTime", (int, float), where)
        if not node or finish <= 0 or state not in STATES:
            self.skipped += 1
            return
        if finish < start:
            log.warning("History Server %s %s: finishTime %s is before startTime %s (clocks "
                        "out of order); left out", where, attempt.get("id"), finish, start)
            self.skipped += 1
            return
        rows["job"].append(job)
        rows["task"].append(task)
        rows["attempt"].append(_field(attempt, "id", str, where))
        rows["node"].append(node.rsplit(":", 1)[0])  # host:port -> host
        kind = str(attempt.get("type", "")).upper()
        rows["type"].append(kind if kind in ("MAP", "REDUCE") else "")
        rows["start"].append(start / 1000.0)
        rows["end"].append(finish / 1000.0)
        rows["state"].append(state)

    def _list(self, path: str, outer: str, inner: str,
              params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The list under ``{outer: {inner: [...]}}``; empty lists come as null or {}."""
        body = self._get(path, params)
        container = body.get(outer) if isinstance(body, dict) else None
        if container is None or container == {}:
            if not isinstance(body, dict) or outer not in body:
                raise HedgeError(f"{self.base_url}{path}: response has no '{outer}' object")
            return []
        items = container.get(inner, []) if isinstance(container, dict) else None
        if isinstance(items, dict):  # some JSON providers unwrap one-element lists
            items = [items]
        if not isinstance(items, list):
            raise HedgeError(f"{self.base_url}{path}: field '{outer}.{inner}' is "
                             f"{type(items).__name__}, expected a list")
        return items

    def _get(self, path: str, params: dict[str, Any] | None) -> Any:
        url = self.base_url.rstrip("/") + path
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self.session.get(url, params=params, timeout=self.timeout,
                                            headers={"Accept": "application/json"})
            except (requests.ConnectionError, requests.Timeout) as exc:
                last = _brief(exc)
                log.warning("History Server %s: %s (try %d)", url, last, attempt + 1)
                continue
            if response.status_code in RETRY_STATUS:
                last = f"HTTP {response.status_code}"
                log.warning("History Server %s: %s (try %d)", url, last, attempt + 1)
                continue
            if response.status_code != 200:
                raise HedgeError(f"{url}: HTTP {response.status_code}: {_remote_message(response)}")
            try:
                return response.json()
            except ValueError as exc:
                raise HedgeError(f"{url}: response is not JSON ({exc})") from exc
        raise HedgeError(f"{url}: History Server unreachable after {self.retries + 1} tries "
                         f"(last: {last})")


def _field(obj: Any, name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = obj.get(name) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise HedgeError(f"History Server {where}: field '{name}' = {value!r}, expected "
                         f"{'a number' if kind is not str else 'a string'}")
    return value


def _brief(exc: requests.RequestException) -> str:
    """'ConnectionError: [Errno 111] Connection refused' rather than urllib3's paragraph."""
    text = str(exc)
    errno = re.search(r"\[Errno -?\d+\][^'\")]*", text)
    timeout = re.search(r"(read|connect) timeout=[\d.]+", text)
    detail = (errno or timeout).group(0).strip() if (errno or timeout) else text[:120]
    return f"{type(exc).__name__}: {detail}"


def _remote_message(response: requests.Response) -> str:
    """The RemoteException message Hadoop's web services put in error bodies."""
    try:
        body = response.json()
        return str(body["RemoteException"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200].strip() or response.reason
