"""hedge serve's warm-up: every policy the AM can drive runs once, off the request path,
through the simulator and through a session (the server's own array kinds)."""

from __future__ import annotations

import logging
import sys

from hedge.server.warmup import warm_policies, warmed_policies


def test_every_live_am_policy_warms_without_failing(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="hedge.server"):
        warm_policies().join(timeout=300)
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "warm_failed" in m], messages
    live = warmed_policies()
    assert "hedge-auto" in live and "oracle" not in live
    assert any(m.startswith(f"event=warm policies={len(live)} ") for m in messages), messages
    # hedge-auto's compiled judge is loaded now: its module holds numba's dispatchers
    assert "numba" in sys.modules and "hedge.policy.auto_kernels" in sys.modules


def test_policies_registered_outside_hedge_are_not_warmed() -> None:
    from hedge.policy.base import _REGISTRY, Policy, register

    @register
    class _Outsider(Policy):
        name = "test-outsider"

        def decide(self, snapshot):  # pragma: no cover - never called
            raise AssertionError

    try:
        assert "test-outsider" not in warmed_policies(live_only=False)
    finally:
        del _REGISTRY["test-outsider"]


def _compiled_versions() -> dict[str, int]:
    """Per numba dispatcher in hedge's loaded modules: how many versions it has compiled."""
    from numba.core.registry import CPUDispatcher

    out = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("hedge.") and module is not None:
            for attr, value in vars(module).items():
                if isinstance(value, CPUDispatcher):
                    out[f"{module_name}.{attr}"] = len(value.signatures)
    return out


def test_after_the_warm_up_a_session_compiles_nothing_new() -> None:
    """The gap a clean-clone CI run showed: the simulator's warm-up left the kernels to be
    compiled again for a session's read-only arrays, at the first real decision."""
    from hedge.server.simulated_am import simulate_through_sessions
    from hedge.sim.sweep import WorkloadSource, workload_for

    warm_policies().join(timeout=300)
    before = _compiled_versions()
    other = workload_for(WorkloadSource(synthetic="jobs=3,tasks=24,reduces=3,"
                                        "straggler_ratio=0.2"), 1)
    result = simulate_through_sessions(other, "hedge-auto")
    assert result.attempts.copy.any()  # it decided, copies and all
    after = _compiled_versions()
    assert {k: v for k, v in after.items() if v != before.get(k, 0)} == {}
