"""The policy contract and the registry that maps policy names to classes.

One policy object serves one job (the simulator and the control plane each create one per
job), so a policy may keep per-job state such as which tasks it already copied.
Parameters are keyword arguments of ``__init__`` with documented defaults, as in
scikit-learn estimators; ``create("late", speculative_cap=0.1)`` builds one.
"""

from __future__ import annotations

import abc
import importlib
from typing import ClassVar

from hedge.errors import HedgeError
from hedge.model import Actions, Snapshot

# Modules that define policies; importing one registers its classes. Add yours here.
POLICY_MODULES = [
    "hedge.policy.baseline",
    "hedge.policy.detectors",
    "hedge.policy.window",
    "hedge.policy.chronos",
    "hedge.policy.replicate",
]

_REGISTRY: dict[str, type[Policy]] = {}


class Policy(abc.ABC):
    """Base class: subclasses set ``name`` and implement ``decide``."""

    name: ClassVar[str] = ""
    # Opt-in promise to the simulator (default False): if this job's previous scan returned
    # an empty Actions (no copy, kill, resume, reservation or avoid list, next_scan_in None,
    # no wake_on_completion) and since then none of its attempts delivered a report, started,
    # ended, was requested or killed and none of its tasks completed, ``decide`` would again
    # return an empty Actions and need not see the scan: time passing and cluster-wide facts
    # (free slots, other jobs) alone never make it act, and skipped scans do not matter to
    # its state. The simulator then skips such scans (results must stay bit-identical).
    scan_idempotent: ClassVar[bool] = False

    @abc.abstractmethod
    def decide(self, snapshot: Snapshot) -> Actions:
        """The actions for this job after observing ``snapshot``."""

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


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


def create(name: str, **params: object) -> Policy:
    """A new policy object for one job. Unknown names or parameters raise HedgeError."""
    _load_all()
    if name not in _REGISTRY:
        raise HedgeError(f"unknown policy '{name}', expected one of: {', '.join(available())}")
    try:
        return _REGISTRY[name](**params)
    except TypeError as exc:
        raise HedgeError(f"policy '{name}': bad parameters {params}: {exc}") from None
