"""The straggler model for real traces: how long a copy of a trace task would take.

A trace records one duration ``d`` per task. Within its *group* (the maps, or the reduces, of
one job) write ``log d = log m + r`` with ``m`` the task's expected duration in its group: the
group's median, scaled by the task's input size where the trace gives every task's input
(``hedge.traces.rerun.Centers``: a task with more input has more work, and that part is never
transient). The model splits the residual ``r`` into the task's own work and a transient
slowdown (its node, the moment):

    inherent work   w = m * exp((1 - lam) * r)      (what any attempt of the task must do)
    slowdown        f = exp(lam * r)                (the original's draw; w * f = d exactly)
    a copy's        f' = exp(lam * e)               (e: a residual drawn from the same group)

so the original replays the trace exactly and a copy is the same work under a fresh draw of
its group's conditions. ``lam`` is the transient share (``hedge.traces.rerun`` measures it):

- ``calibrated`` (the default): ``lam = CALIBRATED_LAMBDA``, fitted to the races between an
  original and its copy that real job histories recorded (which one finished first), see
  docs/trace-model.md; the evidence is small and the output says so;
- ``inherent``: ``lam = 0``, a copy takes exactly as long as the original (hedge before this
  model: speculation can only lose);
- ``transient``: ``lam = 1``, a copy is a fresh draw from its group;
- ``lam=X``: any share in [0, 1].

A copy's residual comes from its own group when the group has at least ``MIN_GROUP`` tasks,
otherwise from all tasks of its phase in the workload (a one-task job says nothing about its
own spread). A trace has no ground truth of which tasks straggled: the workload says so
(``straggler_truth`` False), and precision and recall are not reported for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hedge.errors import HedgeError
from hedge.model import REDUCE
from hedge.traces.rerun import MIN_GROUP, Centers, log_input
from hedge.traces.workload import CopyPools, Workload

# lam of the 37 original/copy races in Hadoop's MRv1 sample job-tracker log (7 copies won),
# input-adjusted: the mean under a uniform prior, 95% likelihood interval 0.2-0.95 (lam <= 0.1
# is ruled out); Google 2011's 97 tasks that succeeded twice agree that slowness does not
# persist (negative slope). Reproduce: `hedge traces model FILE...` (docs/trace-model.md);
# a test checks this value against the fit.
CALIBRATED_LAMBDA = 0.5
NAMED = {"calibrated": CALIBRATED_LAMBDA, "inherent": 0.0, "transient": 1.0}


@dataclass(frozen=True)
class TraceModel:
    """A named share of transient slowdown; ``describe`` is the line a result prints."""

    name: str
    lam: float

    def describe(self) -> str:
        text = f"trace model {self.name} (lam = {self.lam:g}: "
        if self.lam == 0:
            return text + "a copy takes exactly as long as the original)"
        how = (f"{self.lam:.0%} of a task's slowness relative to its job's median is "
               "transient: a copy redraws it from the task's job and phase")
        if self.name == "calibrated":
            how += ("; fitted on 37 copy races of one Hadoop MRv1 log, 95% interval "
                    "0.2-0.95; see docs/trace-model.md")
        return f"{text}{how})"


def parse(text: str) -> TraceModel:
    """``calibrated``, ``inherent``, ``transient`` or ``lam=X`` (0 <= X <= 1)."""
    if text in NAMED:
        return TraceModel(text, NAMED[text])
    if text.startswith("lam="):
        try:
            lam = float(text[4:])
        except ValueError:
            lam = math.nan
        if 0 <= lam <= 1:
            return TraceModel(text, lam)
    raise HedgeError(f"option '--trace-model': {text!r} is not a model; expected calibrated, "
                     "inherent, transient or lam=X with 0 <= X <= 1")


def apply(workload: Workload, model: TraceModel) -> Workload:
    """The workload with each task's duration split into work and slowdown, and the copy
    pools a simulator draws copies' slowdowns from. Originals replay their trace times."""
    d = workload.duration
    group = _groups(workload)
    positive = d > 0
    log_d = np.log(np.where(positive, d, 1.0))
    log_in = log_input(workload.input_bytes)
    n_groups = int(group.max(initial=-1)) + 1
    centers = Centers.fit(log_d[positive], log_in[positive], group[positive], n_groups)
    r = np.where(positive, log_d - centers.of(group, log_in), 0.0)
    r = np.nan_to_num(r)  # a group whose every task took 0 s has no median
    factor = np.exp(model.lam * r)
    work = np.where(d > 0, d / factor, d)
    pools = _pools(factor, group, workload.task_type)
    notes = [*workload.notes, model.describe()]
    return replace(workload, duration=work, straggler_factor=factor, copy_pools=pools,
                   straggler_truth=False, notes=notes)


def _groups(workload: Workload) -> np.ndarray:
    """Group index of every task: job * 2 + phase (MAP 0, REDUCE 1)."""
    return workload.task_job * 2 + (workload.task_type == REDUCE)


def _pools(factor: np.ndarray, group: np.ndarray, task_type: np.ndarray) -> CopyPools:
    """Each task's pool of slowdowns: its group's when the group is large enough, else its
    phase's across the workload. Pools are ranges of ``values`` (tasks sorted by group)."""
    n = len(factor)
    by_group = np.argsort(group, kind="stable")
    sizes = np.bincount(group, minlength=int(group.max(initial=-1)) + 1)
    group_start = np.r_[0, np.cumsum(sizes)][:-1]
    by_phase = np.argsort(task_type == REDUCE, kind="stable")
    values = np.concatenate([factor[by_group], factor[by_phase]])
    phase = (task_type == REDUCE).astype(np.int64)
    phase_sizes = np.bincount(phase, minlength=2)
    phase_start = n + np.r_[0, np.cumsum(phase_sizes)][:-1]
    small = sizes[group] < MIN_GROUP
    start = np.where(small, phase_start[phase], group_start[group])
    size = np.where(small, phase_sizes[phase], sizes[group])
    return CopyPools(values=values, start=start.astype(np.int64), size=size.astype(np.int64))
