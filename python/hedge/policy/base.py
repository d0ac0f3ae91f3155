"""The policy contract and the registry that maps policy names to classes.

One policy object serves one job (the simulator and the control plane each create one per
job), so a policy may keep per-job state such as which tasks it already copied.
Parameters are keyword arguments of ``__init__`` with documented defaults, as in
scikit-learn estimators; ``create("late", speculative_cap=0.1)`` builds one, and
:mod:`hedge.policy.params` resolves them from configuration text.

Everything the simulator and the server may ask of a policy is declared on :class:`Policy`
below, with its default; nothing else is read from a policy object. What a policy's answer may
then do is not the policy's to decide: :mod:`hedge.policy.limits` cuts it to what the
ApplicationMaster allows, in the simulator and on the cluster alike.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np

from hedge.errors import HedgeError
from hedge.model import Actions, Snapshot
from hedge.model.batch import ScanBatch, SlotView, own_state_batch_error, own_state_wake
from hedge.model.truth import Truth
from hedge.policy import ranges

# Modules that define policies; importing one registers its classes. Add yours here.
POLICY_MODULES = [
    "hedge.policy.baseline",
    "hedge.policy.published",
    "hedge.policy.detectors",
    "hedge.policy.window",
    "hedge.policy.chronos",
    "hedge.policy.replicate",
    "hedge.policy.auto",
    "hedge.policy.oracle",
]

_REGISTRY: dict[str, type[Policy]] = {}


class Policy(abc.ABC):
    """Base class: subclasses set ``name`` and implement ``decide``; every other hook below
    is optional and its default is what a policy that does not set it gets."""

    # The registry name (``hedge policies``, ``--policy``, ``hedge.policy``).
    name: ClassVar[str] = ""
    # False: the policy never acts (``none``), so the simulator never builds it a snapshot.
    speculates: ClassVar[bool] = True
    # False: ``hedge serve`` refuses to drive a live ApplicationMaster with this policy (its
    # answers need something stock Hadoop cannot do), saying ``live_am_reason`` (default: a
    # Speculative-Resume explanation).
    live_am_supported: ClassVar[bool] = True
    live_am_reason: ClassVar[str] = ""
    # What the simulator gives this policy that hedge's shim cannot on YARN, and what the
    # policy does there instead ("" none): ``hedge simulate`` prints it under its table, as
    # an assumption its figures rest on.
    live_am_gap: ClassVar[str] = ""
    # Other names a parameter is known by, e.g. a paper's symbol: ``{"alpha":
    # "progress_weight"}`` lets a job set ``hedge.adaptive.alpha`` and ``hedge simulate``
    # take ``--policy adaptive:alpha=0.3`` (hedge.policy.params).
    param_aliases: ClassVar[Mapping[str, str]] = {}
    # The values each numeric parameter may take (hedge.policy.ranges): a value outside its
    # range is refused by hedge.policy.params, naming it, for a job's configuration and for
    # ``hedge simulate --policy`` alike. A parameter not listed takes any value of its type.
    param_ranges: ClassVar[Mapping[str, ranges.Range]] = {}
    # Optional vectorised scan gate over all due jobs (``hedge.model.batch``): one bool per
    # ScanBatch row; a job with no True row would get no action from ``decide`` at this scan,
    # so the simulator skips its snapshot (results stay bit-identical; tests prove it per
    # gated policy). None: every due job is scanned.
    needs_scan: Callable[[ScanBatch], np.ndarray] | None = None
    # Optional compiled form of ``needs_scan`` over the raw slot arrays (``SlotView``): one
    # bool per job + 1. Used only alongside ``needs_scan`` (a subclass that sets
    # ``needs_scan = None`` drops both). None: the simulator gathers a ScanBatch instead.
    needs_scan_slots: Callable[[SlotView], np.ndarray] | None = None
    # Opt-in promise to the simulator (default False): if this job's previous scan returned
    # an empty Actions (no copy, kill, resume, reservation or avoid list, next_scan_in None,
    # no wake_on_completion) and since then none of its attempts delivered a report, started,
    # ended, was requested or killed and none of its tasks completed, ``decide`` would again
    # return an empty Actions and need not see the scan: time passing and cluster-wide facts
    # (free slots, other jobs) alone never make it act, and skipped scans do not matter to
    # its state. The simulator then skips such scans (results must stay bit-identical).
    scan_idempotent: ClassVar[bool] = False
    # Opt-in promise to the simulator (default False): ``decide`` keeps no state (its answer
    # is a function of the snapshot), never kills, resumes or reserves slots, and an answer
    # asking for copies has ``next_scan_in`` None and no ``wake_on_completion`` (any other
    # answer only times the next scan). Then a scan whose copies Hadoop's cap would refuse
    # all of (``hedge.policy.limits``: no room) does nothing, and the simulator skips due jobs
    # with no room and no copy waiting for a slot (a waiting copy is placed by the latest
    # answer's ``avoid_nodes``); they rescan after the default period.
    copies_only: ClassVar[bool] = False
    # Opt-in promise to the simulator (default False): the compiled gate reads
    # ``SlotView.copy_room`` (Hadoop's cap leaves the job room for a copy), and an answer of
    # ``decide`` asking for copies has ``next_scan_in`` None and no ``wake_on_completion``.
    # The gate may then leave out a job whose answer would ask only for copies the cap
    # refuses all of (``hedge.policy.limits``), for a policy that also kills (mantri).
    gate_reads_copy_room: ClassVar[bool] = False
    # Promise to the simulator (default False): the gate never wants a job none of whose
    # tasks has had an attempt (it reads one row per running attempt). Without a wake rule
    # (``needs_scan_from``) such a job then sleeps until its first attempt starts, where it
    # would be checked at every scan instant: on an all-at-once arrival, most of the jobs.
    gate_needs_an_attempt: ClassVar[bool] = False
    # Simulator only (default False): before each ``decide`` the simulator calls ``see`` with
    # the ground truth of that snapshot (``hedge.model.truth.Truth``: true remaining times,
    # what a copy would take). A reference that bounds what any policy can gain; no AM can
    # provide it, so such a policy must also set ``live_am_supported = False``.
    clairvoyant: ClassVar[bool] = False
    # True: ``decide`` reads ``snapshot.job.finished`` (each completed task's winning attempt:
    # node, start, end). The control plane always fills it; the simulator only for such a
    # policy (building it costs every scan).
    reads_finished: ClassVar[bool] = False
    # What a clairvoyant policy is told of a copy's time (``Truth.copy_time``): "draw", the
    # very slowdown the simulator will give that copy, or "median", the median of the pool
    # it is drawn from (a reference that knows the distribution, not the draw)
    copy_told: str = "draw"

    @classmethod
    def run_notes(cls, policies: Sequence[Policy]) -> list[str]:
        """What a simulated run's figures rest on that only its jobs' policy objects know
        (``policies``: one per job that was scanned); ``hedge simulate`` prints each as a
        note under its table. None by default."""
        del policies
        return []

    def job_note(self) -> str | None:
        """What this job's policy object found that its operator should hear when the job
        ends (``hedge serve`` logs it with the job's close line). None by default."""
        return None

    def see(self, truth: Truth) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Receive the ground truth of the next snapshot (only if ``clairvoyant``)."""

    def join(self, shared: dict[str, object]) -> None:  # noqa: B027 - optional hook
        """Receive, once, the dict every policy object of one cluster shares (one per
        simulation run, one per ``hedge serve`` process), for what its jobs learn from each
        other; a policy keeps its part under its own ``name``. Called from several threads
        behind a live AM: what a policy keeps there must be thread-safe."""

    @abc.abstractmethod
    def decide(self, snapshot: Snapshot) -> Actions:
        """The actions for this job after observing ``snapshot``."""

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


class OwnStateGate:
    """A simulator scan gate read from each job's own policy object: the policy defines
    ``_quiet_until(view, j, slots)``, the earliest time its ``decide`` could act or change
    its state were the job not to change (``hedge.model.batch.own_state_wake``). Only the
    compiled simulator passes the jobs' policies (``SlotView.policies``); the batch form
    raises a HedgeError. Put before ``Policy`` (or its subclass) among the bases."""

    name: str

    def needs_scan(self, batch: ScanBatch) -> np.ndarray:
        """The batch form sees no job's own state: only the compiled path gates."""
        raise own_state_batch_error(self.name)

    def needs_scan_slots(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): ``_quiet_until`` is now."""
        return own_state_wake(view) <= view.now

    def needs_scan_from(self, view: SlotView) -> np.ndarray:
        """Per due job (index ``job + 1``): ``_quiet_until`` (inf elsewhere)."""
        return own_state_wake(view)


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: make a policy available by its ``name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no policy name")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    for module in POLICY_MODULES:
        importlib.import_module(module)


def available() -> list[str]:
    """Names of every registered policy, sorted."""
    _load_all()
    return sorted(_REGISTRY)


def policy_class(name: str) -> type[Policy]:
    """The class registered as ``name``; an unknown name raises HedgeError."""
    _load_all()
    if name not in _REGISTRY:
        raise HedgeError(f"unknown policy '{name}', expected one of: {', '.join(available())}")
    return _REGISTRY[name]


def create(name: str, **params: object) -> Policy:
    """A new policy object for one job. Unknown names or parameters raise HedgeError."""
    cls = policy_class(name)
    for param, value in params.items():
        ranges.check(cls.param_ranges, param, value, f"policy '{name}': {param}")
    try:
        return cls(**params)
    except TypeError as exc:
        raise HedgeError(f"policy '{name}': bad parameters {params}: {exc}") from None
