"""Speculation policies: ``decide(snapshot) -> actions``, the same objects in the simulator
and behind the live ApplicationMaster."""

from hedge.policy.base import Policy, available, create, register

__all__ = ["Policy", "available", "create", "register"]
