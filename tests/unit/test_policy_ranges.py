"""Policy parameters outside their declared range are refused (hedge.policy.ranges)."""

from __future__ import annotations

import math

import pytest

from hedge.errors import HedgeError
from hedge.policy.base import available, create, policy_class
from hedge.policy.params import accepted_params, policy_params
from hedge.policy.ranges import ABOVE_0, AT_LEAST_0, SHARE, Range


@pytest.mark.parametrize("name", available())
def test_every_range_names_a_parameter_and_holds_its_default(name):
    cls = policy_class(name)
    accepted = accepted_params(cls)
    for param, bounds in cls.param_ranges.items():
        assert param in accepted, f"{name}: range for unknown parameter {param}"
        default = accepted[param]
        if default is not None:
            assert bounds.holds(float(default)), f"{name}: default {param}={default}"


def test_ranges_say_what_they_hold():
    assert (AT_LEAST_0.describe(), ABOVE_0.describe(), SHARE.describe()) == (
        ">= 0", "> 0", "in [0, 1]")
    assert Range(0.0, 1.0).describe() == "in [0, 1)"
    assert Range(1.0, high_open=False).describe() == ">= 1 or inf"
    assert not ABOVE_0.holds(0.0) and AT_LEAST_0.holds(0.0) and not AT_LEAST_0.holds(math.inf)


def test_infinity_passes_only_where_it_means_off():
    # hedge-auto's skew_ratio = inf turns skew triage off; an infinite cost weight means nothing
    assert policy_params("hedge-auto", {"skew_ratio": "inf"}) == {"skew_ratio": math.inf}
    with pytest.raises(HedgeError, match=r"hedge.auto.cost_weight = inf: expected >= 0"):
        policy_params("hedge-auto", {"cost_weight": "inf"})


def test_create_refuses_what_a_caller_passes_directly():
    with pytest.raises(HedgeError, match=r"^policy 'mantri': max_copies = 0: expected >= 1$"):
        create("mantri", max_copies=0)
    assert create("mantri", max_copies=1).max_copies == 1


def test_a_value_of_another_type_is_left_to_the_policy():
    # the type is _coerce's to check; a range only judges numbers
    assert create("hedge-auto", recopy=False).recopy is False
