"""Which policy to turn on, at a glance: the lines ``hedge simulate`` prints under its table.

An operator weighs two things (issue 16): how long jobs take and how many slot-seconds the
copies waste. Of the policies run that an AM can run (the clairvoyant ``oracle`` is a
reference line, not a choice), the lines name

- the one with the lowest mean job time, and its ratio to ``none``'s (when ``none`` ran);
  where even that one is not ``NO_GAIN`` or more below ``none``'s, they say that speculation
  gains nothing here, so that a reader does not pick a winner out of noise;
- the **frontier**: every policy that no other beats on both mean job time and wasted
  slot-seconds (less of one and no more of the other). Each is the fastest for what it
  wastes; a policy off it wastes more than another that is at least as fast. ``none``
  wastes nothing, so it is always on it. The report's first plot draws it
  (``hedge.report.html``, which policy to turn on: saving against waste).

With several seeds a policy's figures are its means over the seeds it ran (a single seed's
standings may be that seed's luck; ``hedge.sim.paired`` gives the spread).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hedge.sim.paired import clairvoyant

NO_GAIN = 0.01  # a mean job time within 1% of none's: no gain (issue 16's no-harm tolerance)


@dataclass
class Standing:
    """One policy's figures over the seeds it ran: ``mean`` job time (s), ``waste``
    (wasted slot-seconds), ``seeds`` (how many runs they average)."""

    policy: str
    mean: float
    waste: float
    seeds: int

    def beats(self, other: Standing) -> bool:
        """No worse on either figure and better on one."""
        return (self.mean <= other.mean and self.waste <= other.waste
                and (self.mean < other.mean or self.waste < other.waste))


def standings(rows: list[dict], references: bool = False) -> list[Standing]:
    """Per policy an AM can run (``references``: per clairvoyant one instead, the reference
    lines), in the order first named, its figures averaged over its runs (a run without
    both figures is left out)."""
    runs: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        policy = str(row["policy"])
        mean, waste = row.get("mean_job_time"), row.get("wasted_s")
        if (mean is None or waste is None or not math.isfinite(mean)
                or clairvoyant(policy) != references):
            continue
        runs.setdefault(policy, []).append((float(mean), float(waste)))
    return [Standing(p, sum(m for m, _ in r) / len(r), sum(w for _, w in r) / len(r), len(r))
            for p, r in runs.items()]


def frontier(ranked: list[Standing]) -> list[Standing]:
    """The standings no other one beats, by mean job time."""
    return sorted((s for s in ranked if not any(o.beats(s) for o in ranked)),
                  key=lambda s: (s.mean, s.waste))


def standings_lines(rows: list[dict]) -> list[str]:
    """The lines under the table (none with fewer than two policies an AM can run)."""
    ranked = standings(rows)
    if len(ranked) < 2:
        return []
    seeds = max(s.seeds for s in ranked)
    over = "" if seeds == 1 else f", means over {seeds} seeds"
    best = min(ranked, key=lambda s: s.mean)
    none = next((s for s in ranked if s.policy == "none"), None)
    lines = [f"standings (policies an AM can run{over}): lowest mean job time: "
             f"{best.policy}, {best.mean:,.1f} s" + _against(best, none)]
    edge = ", ".join(f"{s.policy} ({s.mean:,.1f} s, {s.waste:,.0f} s wasted)"
                     for s in frontier(ranked))
    lines.append(f"  not beaten on both mean job time and wasted slot time: {edge}")
    if none is not None and best.mean > none.mean * (1 - NO_GAIN):
        lines.append(f"  no policy's mean job time is {NO_GAIN:.0%} or more below none's: "
                     "on this workload speculation gains nothing, and a copy only costs "
                     "slot time")
    else:
        lines += _close_call(ranked, best, seeds)
    return lines


def _close_call(ranked: list[Standing], best: Standing, seeds: int) -> list[str]:
    """On one seed, a lead of under ``NO_GAIN`` may be that seed's draws: said, with how
    to check it."""
    others = [s for s in ranked if s is not best]
    runner = min(others, key=lambda s: s.mean)
    if seeds > 1 or not runner.mean < best.mean * (1 + NO_GAIN):
        return []
    lead = runner.mean / best.mean - 1
    return [f"  {best.policy} leads {runner.policy} by {lead:.1%} on one seed: a lead this "
            "small may be the seed's draws (--seed 0-4 compares them seed by seed)"]


def _against(best: Standing, none: Standing | None) -> str:
    if none is None or best is none or not none.mean > 0:
        return ""
    return f" ({best.mean / none.mean:.3f} x none's, {best.waste:,.0f} s wasted)"
