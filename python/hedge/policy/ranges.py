"""The values a numeric policy parameter may take.

A policy declares them next to its ``__init__`` (``Policy.param_ranges``), and
:func:`hedge.policy.params.policy_params` refuses a value outside them, naming the
parameter as the user wrote it, the value and the range, the same way for ``hedge simulate
--policy NAME:KEY=VALUE`` and for a job's ``hedge.<family>.<key>`` on the cluster: a cost
weight of -1 or a share of 5 would otherwise run, and give an answer that means nothing.

A bound is included unless said otherwise; infinity is refused unless the range's upper
bound is an included infinity (a parameter where it means "off").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from hedge.errors import HedgeError


@dataclass(frozen=True)
class Range:
    """``low`` .. ``high`` (``low_open``/``high_open``: that bound excluded)."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = True
    meaning: str = ""  # what the parameter is, for the message ("a share of the slots")

    def holds(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def describe(self) -> str:
        """The range as a message puts it: ``>= 0``, ``> 0``, ``in [0, 1]``, ``in [0, 1)``,
        ``>= 1 or inf``."""
        if self.high == math.inf:
            text = f"{'>' if self.low_open else '>='} {self.low:g}"
            return text if self.high_open else f"{text} or inf"
        return (f"in {'(' if self.low_open else '['}{self.low:g}, "
                f"{self.high:g}{')' if self.high_open else ']'}")


AT_LEAST_0 = Range(0.0)
ABOVE_0 = Range(0.0, low_open=True)
AT_LEAST_1 = Range(1.0)
SHARE = Range(0.0, 1.0, high_open=False)  # a fraction, both ends included


def check(ranges: Mapping[str, Range], param: str, value: object, where: str) -> None:
    """HedgeError unless ``value`` of ``param`` lies in its declared range (a parameter with
    no range, or a value that is not a number, passes). ``where`` names the parameter as
    the user wrote it (``--policy hedge-auto:lam``, ``hedge.auto.lam``)."""
    bounds = ranges.get(param)
    if bounds is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if not bounds.holds(float(value)):
        what = f" ({bounds.meaning})" if bounds.meaning else ""
        raise HedgeError(f"{where} = {value!r}: expected {bounds.describe()}{what}")
