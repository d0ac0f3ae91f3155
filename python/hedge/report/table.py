"""Plain-text table of simulation results (one row per policy, or per policy and seed)."""

from __future__ import annotations

from hedge.sim.metrics import KEYS, named_runs

_HEADERS = {
    "policy": "policy", "jobs": "jobs", "mean_job_time": "mean", "p50_job_time": "p50",
    "p95_job_time": "p95", "p99_job_time": "p99", "makespan": "makespan",
    "machine_time": "machine_s", "wasted_s": "wasted_s", "energy_J": "energy_kWh", "deadline_hit_rate": "PoCD",
    "copies_launched": "copies", "copies_won": "won", "copies_killed": "killed",
    "precision": "prec", "recall": "recall",
}


def _cell(key: str, value: object) -> str:
    if value is None:
        return "-"
    if key == "energy_J":  # joules in the rows, kWh in the table
        return f"{float(value) / 3.6e6:.1f}"
    if key in ("deadline_hit_rate", "precision", "recall", "of_oracle"):
        return f"{float(value):.3f}"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def oracle_shares(rows: list[dict]) -> list[float | None]:
    """Per row: the share of the oracle's mean-job-time gain over ``none`` (same seed) the
    row's policy captures (1.0: all of it; None without both runs, or when the oracle gains
    nothing). The oracle is a clairvoyant reference, not a strict bound (policy/oracle.py:
    it does not see the copy's node or the wait for a slot), so a share can pass 1.0."""
    runs: dict[object, dict[str, dict]] = {}
    for r in rows:
        runs.setdefault(r.get("seed"), {})[str(r["policy"])] = r
    out: list[float | None] = []
    for r in rows:
        seed = runs[r.get("seed")]
        none, oracle = seed.get("none"), seed.get("oracle")
        gain = none["mean_job_time"] - oracle["mean_job_time"] if none and oracle else 0.0
        out.append((none["mean_job_time"] - r["mean_job_time"]) / gain if gain > 1e-9 else None)
    return out


def oracle_note(rows: list[dict], listed: int = 4) -> str | None:
    """What a table whose ``of_oracle`` passes 1.0 must say (one line, the first ``listed``
    such runs named), else None: the reader would take the oracle for a bound."""
    above = [(r, share) for r, share in zip(rows, oracle_shares(rows), strict=True)
             if share is not None and share > 1.0 + 1e-9]
    if not above:
        return None
    named = named_runs([(r, f"{share:.3f}") for r, share in above], listed)
    return (f"of_oracle above 1.0 in {len(above)} run(s) ({named}): the oracle is a "
            "clairvoyant reference, not a bound on this workload (it copies a task at most "
            "once, where its copy would win and shorten its type's finish, blind to the wait "
            "for a slot, the copy's node and what its copies' slots cost other jobs: "
            "hedge.policy.oracle)")


def format_table(rows: list[dict]) -> str:
    """Aligned columns: times in seconds, energy in kWh, rates as fractions; with ``none``
    and ``oracle`` among the runs, ``of_oracle`` (:func:`oracle_shares`)."""
    keys = list(KEYS)
    if len({r.get("seed") for r in rows}) > 1:
        keys.insert(1, "seed")
    shares = oracle_shares(rows)
    if any(share is not None for share in shares):
        rows = [{**r, "of_oracle": share} for r, share in zip(rows, shares, strict=True)]
        keys.insert(keys.index("mean_job_time") + 1, "of_oracle")
    headers = [_HEADERS.get(k, k) for k in keys]
    cells = [[_cell(k, r.get(k)) for k in keys] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) if i else h.ljust(w)
                       for i, (h, w) in enumerate(zip(headers, widths, strict=True)))]
    for row in cells:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    return "\n".join(lines)
