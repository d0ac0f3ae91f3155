"""How a policy's actions are limited before they act: one rule for the simulator, ``hedge
serve`` and the Java shim.

A policy answers what it would like (:class:`hedge.model.Actions`); a MapReduce
ApplicationMaster lets only part of it happen. The same cut is made everywhere: the simulator
applies it to every answer (``hedge.sim.actuation``), ``hedge serve`` applies it before answering
(``hedge.server.session``), and the shim (``org.hedge.shim.ActionLimits``) checks it once more
with what only the AM knows (copies requested and not started yet, tasks that finished since
the snapshot). Java and Python are held equal by ``tests/data/action_limits_vectors.tsv``,
which Python writes (``tests/action_limit_vectors.py``) and JUnit and pytest both check.

The rules, in the order they are applied:

1. **Per-type switches.** No copy (and, in the simulator, no resume) of a map when
   ``mapreduce.map.speculative`` is false, of a reduce when ``mapreduce.reduce.speculative``
   is false.
2. **Open tasks only.** No copy of a task that has completed (the simulator knows; the server
   cannot tell a finished task from one not started, so the shim checks this one).
3. **Hadoop's cap, copy by copy.** Speculative attempts of the job (running copies plus copies
   requested and not started) stay within ``max(minimum-allowed-tasks, cap-total-tasks x
   tasks, cap-running-tasks x tasks with a running attempt)`` (an integer, rounded down, as
   Hadoop's ``(int) Math.max(...)``), counted over the whole job (maps and reduces together,
   as the shim has always counted). Requests are granted in the policy's order; a task asking
   for k copies gets as many as the room left allows (copies per task). ``hedge.caps.enforce
   = false`` lifts this rule only.
4. **Never the last attempt.** A kill is carried out only while its task keeps another live
   attempt (running, or in the simulator waiting for a slot) that this answer has not already
   killed; kills are taken in the policy's order, so of a task's attempts the last one named
   is the one spared when all are.

5. **A kill is a restart** (a stock MapReduce AM; the simulator's default, ``--cluster
   kills=restart``). The AM starts a new attempt in place of every attempt it kills while the
   task has not succeeded (TaskImpl), so a kill is carried out only as one of the copies the
   same answer asks for its task (the AM's new attempt is that copy) and a kill no copy pairs
   with is held: its attempt runs on until its task ends. The shim does this
   (``org.hedge.shim.KillsAsRestarts``); the simulator drops the held kills and keeps the
   copies (its kill frees the slot and the copy is queued: the same one new attempt);
   ``kills=free`` models an AM that can end an attempt alone (the papers' assumption).
   ``hedge serve`` answers with the policy's kills as asked. Java and Python are held equal
   by ``tests/data/kills_as_restarts_vectors.tsv`` (``tests/kills_as_restarts_vectors.py``).

Not limits on a policy's actions: ``mapreduce.job.speculative.retry-after-speculate`` and
``retry-after-no-speculate`` time Hadoop's own scans (the ``hadoop`` policy and the shim's
fallback); a policy sets its own rescan with ``Actions.next_scan_in``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from hedge.errors import HedgeError
from hedge.model import Actions, AttemptState, Snapshot

# Hadoop's property name -> (SpeculationSettings field, what the value means), with Hadoop's
# defaults as the field defaults (MRJobConfig.DEFAULT_*, the same in Hadoop 2.7.3 and 3.4.1).
PROPERTIES: dict[str, tuple[str, str]] = {
    "mapreduce.map.speculative": (
        "map_speculative", "true/false: may map tasks get speculative copies"),
    "mapreduce.reduce.speculative": (
        "reduce_speculative", "true/false: may reduce tasks get speculative copies"),
    "mapreduce.job.speculative.speculative-cap-running-tasks": (
        "cap_running_tasks", "fraction of the tasks running now that may be speculating"),
    "mapreduce.job.speculative.speculative-cap-total-tasks": (
        "cap_total_tasks", "fraction of all the job's tasks that may be speculating"),
    "mapreduce.job.speculative.minimum-allowed-tasks": (
        "minimum_allowed_tasks", "speculating tasks always allowed, whatever the fractions"),
    "hedge.caps.enforce": (
        "enforce_caps", "true/false: apply the three caps above to hedge's copies (the shim's "
        "own switch; false lifts the caps, not the other rules)"),
}


@dataclass(frozen=True)
class SpeculationSettings:
    """A job's speculation settings (see :data:`PROPERTIES` for each field's property)."""

    map_speculative: bool = True
    reduce_speculative: bool = True
    cap_running_tasks: float = 0.1
    cap_total_tasks: float = 0.01
    minimum_allowed_tasks: int = 10
    enforce_caps: bool = True

    def allowed(self, total_tasks: int, running_tasks: int) -> int:
        """Speculative attempts the job may have at once (Hadoop's formula, rounded down)."""
        return int(max(self.minimum_allowed_tasks, self.cap_total_tasks * total_tasks,
                       self.cap_running_tasks * running_tasks))

    def properties(self) -> dict[str, str]:
        """Every setting by its property name, as text (what the shim sends, what is shown)."""
        return {key: _text(getattr(self, name)) for key, (name, _) in PROPERTIES.items()}

    def changed(self) -> dict[str, str]:
        """The settings that differ from Hadoop's defaults, by property name."""
        default = SpeculationSettings()
        return {key: _text(getattr(self, name)) for key, (name, _) in PROPERTIES.items()
                if getattr(self, name) != getattr(default, name)}

    @classmethod
    def from_properties(cls, props: Mapping[str, object], origin: str = "") -> SpeculationSettings:
        """Settings from property text (keys of :data:`PROPERTIES` only; others raise)."""
        fields = {}
        for key, text in props.items():
            if key not in PROPERTIES:
                raise HedgeError(f"{origin}{key}: not a speculation limit (expected one of: "
                                 f"{', '.join(PROPERTIES)})")
            fields[PROPERTIES[key][0]] = parse_value(key, text, origin)
        return cls(**fields)


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


def parse_value(key: str, text: object, origin: str = "") -> bool | int | float:
    """One property's value in its field's type; HedgeError naming ``origin``, key and value."""
    name, meaning = PROPERTIES[key]
    default = getattr(SpeculationSettings(), name)
    if isinstance(text, bool | int | float) and not isinstance(text, str):
        text = _text(text)
    value = str(text).strip()
    if isinstance(default, bool):
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif isinstance(default, int):
        if value.lstrip("+").isdigit():
            return int(value)
    else:
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if math.isfinite(number) and number >= 0:
            return number
    expected = {bool: "true or false", int: "an integer >= 0"}.get(type(default),
                                                                   "a number >= 0")
    raise HedgeError(f"{origin}{key} = {text!r}: expected {expected} ({meaning})")


def replace(settings: SpeculationSettings, props: Mapping[str, object],
            origin: str = "") -> SpeculationSettings:
    """``settings`` with the given properties changed."""
    fields = {PROPERTIES[k][0]: parse_value(k, v, origin) for k, v in props.items()}
    return dataclasses.replace(settings, **fields)


# ---------------------------------------------------------------------------- the rules
def room(settings: SpeculationSettings, total_tasks: int, running_tasks: int,
         speculating: int) -> int:
    """Copies the caps allow now (rule 3); unbounded (2^31 - 1) when caps are not enforced."""
    if not settings.enforce_caps:
        return 2**31 - 1
    return settings.allowed(total_tasks, running_tasks) - speculating


# Hadoop's own defaults: the settings a policy asks its copies within, since a snapshot does
# not carry the job's own (window, the chronos policies, hedge-auto)
HADOOP_DEFAULTS = SpeculationSettings()


def snapshot_room(snapshot: Snapshot, settings: SpeculationSettings) -> int:
    """:func:`room` counted from a snapshot as the AM counts (rule 3): speculating = live
    (running or waiting) attempts marked speculative; running tasks = tasks with a RUNNING
    attempt. A policy asks within it (a copy the AM refused would leave its task counted as
    racing); :func:`limit` cuts by it."""
    a, job = snapshot.attempts, snapshot.job
    live = (a.state == AttemptState.RUNNING) | (a.state == AttemptState.WAITING)
    # distinct tasks by a count per task index (indices are checked to be in [0, tasks));
    # np.unique hashed or sorted them at 10-600 us a scan, the bulk of this function
    running_tasks = int(np.count_nonzero(np.bincount(a.task[a.state == AttemptState.RUNNING])))
    return room(settings, job.n_maps + job.n_reduces, running_tasks,
                int(np.count_nonzero(live & a.speculative)))


def limit_copies(settings: SpeculationSettings, n_maps: int, space: int, task: np.ndarray,
                 copies: np.ndarray, open_task: np.ndarray) -> np.ndarray:
    """Copies granted per request (rules 1-3): request i asks ``copies[i]`` of ``task[i]``
    (maps are ``task < n_maps``); ``open_task[i]``: the task has not completed; ``space``:
    :func:`room`. Requests are served in order until the room is used up."""
    granted = np.zeros(len(task), dtype=np.int64)
    is_map = np.asarray(task) < n_maps
    on = np.where(is_map, settings.map_speculative, settings.reduce_speculative)
    for i in np.flatnonzero(on & np.asarray(open_task, dtype=bool)).tolist():
        if space <= 0:
            break
        granted[i] = max(0, min(int(copies[i]), space))
        space -= int(granted[i])
    return granted


def limit_kills(kill_task: np.ndarray, live: Mapping[int, int] | np.ndarray) -> np.ndarray:
    """Which kills are carried out (rule 4), in order: ``kill_task[i]`` is the task of the
    attempt killed (-1: an attempt the AM does not know, never carried out; a repeated attempt
    is the caller's to drop), ``live[task]`` its live attempts before this answer."""
    left: dict[int, int] = {}
    keep = np.zeros(len(kill_task), dtype=bool)
    for i, t in enumerate(np.asarray(kill_task).tolist()):
        if t < 0:
            continue
        n = left.get(t, int(live[t]))
        if n > 1:
            keep[i] = True
            left[t] = n - 1
    return keep


def pair_kills(kill_task: np.ndarray, copy_task: np.ndarray, copies: np.ndarray,
               ) -> tuple[np.ndarray, np.ndarray]:
    """Rule 5: which kills a stock AM can carry out, in the answer's order, and the copies
    still to ask for. ``kill_task[i]``: the task of kill i (-1: not carried out anyway, rule
    4); ``copy_task``/``copies``: the answer's copies after rules 1-3. Each kill sent spends
    one copy of its task (the AM's new attempt stands for it), from its first request with
    copies left."""
    left = np.array(copies, dtype=np.int64)
    send = np.zeros(len(kill_task), dtype=bool)
    copy_task = np.asarray(copy_task).tolist()
    for k, t in enumerate(np.asarray(kill_task).tolist()):
        for i, c in enumerate(copy_task):
            if t >= 0 and c == t and left[i] > 0:
                left[i] -= 1
                send[k] = True
                break
    return send, left


def hold_lone_kills(actions: Actions, snapshot: Snapshot) -> Actions:
    """Rule 5 in the simulator: ``actions`` without the kills no copy of their task pairs
    with (the copies stay: there a kill frees its slot and the copy is queued, which is the
    one new attempt the AM starts). Apply after :func:`limit`."""
    if not len(actions.kill_attempt):
        return actions
    a = snapshot.attempts
    live_rows = (a.state == AttemptState.RUNNING) | (a.state == AttemptState.WAITING)
    task = _kill_tasks(actions.kill_attempt, a, live_rows)  # limit() kept only live ones
    # a resume (chronos-resume, simulator only) restarts its task too
    copy_task = np.concatenate([actions.speculate_task, actions.resume_task])
    copies = np.concatenate([actions.speculate_copies, actions.resume_copies])
    send, _ = pair_kills(task, copy_task, copies)
    if send.all():
        return actions
    return dataclasses.replace(actions, kill_attempt=actions.kill_attempt[send])


def limit(actions: Actions, snapshot: Snapshot, settings: SpeculationSettings,
          done: np.ndarray | None = None) -> Actions:
    """``actions`` as the AM lets them happen after ``snapshot`` (the module's four rules).

    ``done``: per job task, whether it has completed (None: unknown, as to ``hedge serve``).
    Counts come from the snapshot: speculating = live (running or waiting) attempts marked
    speculative; running tasks = tasks with a RUNNING attempt. Returns ``actions`` itself when
    nothing is cut (indices are assumed checked by the caller).
    """
    if not (len(actions.speculate_task) or len(actions.kill_attempt)
            or len(actions.resume_task)):
        return actions
    job, a = snapshot.job, snapshot.attempts
    n_tasks = job.n_maps + job.n_reduces
    live_rows = (a.state == AttemptState.RUNNING) | (a.state == AttemptState.WAITING)
    changes: dict[str, object] = {}
    if len(actions.speculate_task):
        task = actions.speculate_task
        space = snapshot_room(snapshot, settings)
        open_task = np.ones(len(task), dtype=bool) if done is None else ~done[task]
        granted = limit_copies(settings, job.n_maps, space, task, actions.speculate_copies,
                               open_task)
        if not np.array_equal(granted, actions.speculate_copies):
            kept = granted > 0
            changes.update(speculate_task=task[kept], speculate_copies=granted[kept],
                           prefer_node=actions.prefer_node[kept])
    if len(actions.kill_attempt):
        keep = _kills(actions.kill_attempt, a, live_rows, n_tasks)
        if not keep.all():
            changes["kill_attempt"] = actions.kill_attempt[keep]
    if len(actions.resume_task):
        on = _type_on(settings, actions.resume_task < job.n_maps)
        if not on.all():
            changes.update(resume_task=actions.resume_task[on],
                           resume_copies=actions.resume_copies[on])
    return dataclasses.replace(actions, **changes) if changes else actions


def _type_on(settings: SpeculationSettings, is_map: np.ndarray) -> np.ndarray:
    return np.where(is_map, settings.map_speculative, settings.reduce_speculative)


def _kills(kill: np.ndarray, a, live_rows: np.ndarray, n_tasks: int) -> np.ndarray:
    """Rule 4 on attempt keys: each key's task from the snapshot; repeats and unknown keys
    are not carried out."""
    live = np.bincount(a.task[live_rows], minlength=n_tasks)
    return limit_kills(_kill_tasks(kill, a, live_rows), live)


def _kill_tasks(kill: np.ndarray, a, live_rows: np.ndarray) -> np.ndarray:
    """The task of each killed attempt key among the live rows; -1 for an unknown key or a
    repeat of an earlier one."""
    rows = np.flatnonzero(live_rows)
    order = np.argsort(a.attempt[rows], kind="stable")
    keys = a.attempt[rows][order]
    pos = np.minimum(np.searchsorted(keys, kill), max(len(keys) - 1, 0))
    known = (keys[pos] == kill) if len(keys) else np.zeros(len(kill), dtype=bool)
    kill_task = np.where(known, a.task[rows][order][pos] if len(keys) else -1, -1)
    _, first = np.unique(kill, return_index=True)
    repeat = np.ones(len(kill), dtype=bool)
    repeat[first] = False
    kill_task[repeat] = -1
    return kill_task
