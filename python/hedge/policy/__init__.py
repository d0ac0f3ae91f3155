"""Speculation policies: ``decide(snapshot) -> actions``, the same objects in the simulator
and behind the live ApplicationMaster, their parameters (:mod:`hedge.policy.params`) and the
limits the AM puts on their actions (:mod:`hedge.policy.limits`)."""

from hedge.policy.base import Policy, available, create, policy_class, register
from hedge.policy.limits import SpeculationSettings
from hedge.policy.params import policy_family, policy_params

__all__ = ["Policy", "SpeculationSettings", "available", "create", "policy_class",
           "policy_family", "policy_params", "register"]
