"""Policies compared seed by seed, against the first one named.

Each seed draws its own stragglers, report latencies and copies' times (on a trace under the
calibrated model, the copies' slowdowns), so a difference between two policies on one seed
may be that seed's luck. With several seeds ``hedge simulate`` pairs each policy's run with
the baseline's run on the same seed (the same workload and draws of the cluster), divides its
mean job time, p95 job time and machine time by the baseline's, and summarises the ratios
over the seeds: their geometric mean (the usual mean of ratios) and their least and greatest.
``lowest mean on`` counts the seeds on which a policy had the lowest mean job time of the
policies run that an AM can run (a tie counts for each; the clairvoyant ``oracle`` is a
reference line, not a contender), so a lead that holds on every seed reads ``n of n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# the figures compared: (row key, column heading)
FIGURES = (("mean_job_time", "mean job time"), ("p95_job_time", "p95 job time"),
           ("machine_time", "machine time"))


@dataclass
class Spread:
    """One figure's ratios to the baseline's, over the seeds both ran."""

    gmean: float
    least: float
    greatest: float

    @classmethod
    def of(cls, ratios: list[float]) -> Spread | None:
        """None when some seed gives no finite positive ratio (a figure of zero or none)."""
        if not ratios or not all(math.isfinite(r) and r > 0 for r in ratios):
            return None
        gmean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        return cls(gmean, min(ratios), max(ratios))

    def __str__(self) -> str:
        return f"{self.gmean:.3f} ({self.least:.3f}-{self.greatest:.3f})"


def paired_summary(rows: list[dict]) -> list[str]:
    """The lines ``hedge simulate`` prints under its table when it ran two seeds or more
    (none otherwise): a heading, column names, one line per policy but the baseline."""
    by_run = {(row["policy"], row.get("seed", 0)): row for row in rows}
    policies = list(dict.fromkeys(row["policy"] for row in rows))
    seeds = sorted({row.get("seed", 0) for row in rows})
    if len(seeds) < 2 or len(policies) < 2:
        return []
    base = policies[0]
    contenders = [p for p in policies if not clairvoyant(p)]
    lowest = _lowest_counts(by_run, contenders, seeds)
    width = max(len(p) for p in policies[1:] + ["policy"])
    n = len(seeds)
    lines = [f"seeds {_seed_text(seeds)}: each policy's figures over {base}'s on the same seed, "
             f"geometric mean (least-greatest) of the {n} ratios",
             f"{'policy':<{width}}  " + "".join(f"{head:<22}" for _, head in FIGURES)
             + "lowest mean on"]
    for policy in policies[1:]:
        cells = []
        for key, _ in FIGURES:
            spread = Spread.of([_ratio(by_run, policy, base, seed, key) for seed in seeds])
            cells.append(f"{str(spread) if spread else '-':<22}")
        wins = f"{lowest[policy]} of {n} seeds" if policy in lowest else "(a reference)"
        lines.append(f"{policy:<{width}}  " + "".join(cells) + wins)
    if base in lowest:
        lines.append(f"({base}: the lowest mean job time on {lowest[base]} of {n} seeds; a tie "
                     "counts for each policy in it)")
    return lines


def clairvoyant(policy: str) -> bool:
    """Whether a run's policy (``name`` or ``name:key=value,...``) knows what no AM can."""
    from hedge.policy.base import policy_class  # the policies' modules: only when compared

    return policy_class(policy.split(":")[0]).clairvoyant


def _ratio(by_run: dict, policy: str, base: str, seed: int, key: str) -> float:
    """``policy``'s figure over ``base``'s on ``seed`` (NaN where either is missing)."""
    mine, theirs = by_run.get((policy, seed), {}).get(key), by_run.get((base, seed), {}).get(key)
    if mine is None or theirs is None or not theirs > 0:
        return math.nan
    return float(mine) / float(theirs)


def _lowest_counts(by_run: dict, policies: list[str], seeds: list[int]) -> dict[str, int]:
    """Per policy, the seeds on which its mean job time was the lowest (ties: each)."""
    counts = dict.fromkeys(policies, 0)
    for seed in seeds:
        means = {p: by_run.get((p, seed), {}).get("mean_job_time") for p in policies}
        known = {p: m for p, m in means.items() if m is not None and math.isfinite(m)}
        if not known:
            continue
        best = min(known.values())
        for policy, mean in known.items():
            counts[policy] += mean == best
    return counts


def _seed_text(seeds: list[int]) -> str:
    """``0-4`` for a run of consecutive seeds, else ``0,2,7``."""
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)
