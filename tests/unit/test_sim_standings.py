"""Which policy to turn on: the standings under hedge simulate's table (hedge.sim.standings)."""

from __future__ import annotations

from hedge.cli import main
from hedge.sim.standings import Standing, frontier, standings, standings_lines


def row(policy: str, mean: float, waste: float, seed: int = 0) -> dict:
    return {"policy": policy, "seed": seed, "mean_job_time": mean, "wasted_s": waste}


def test_the_frontier_keeps_each_policy_no_other_beats_on_both_figures():
    ranked = standings([row("none", 100, 0), row("hadoop", 95, 50), row("late", 96, 80),
                        row("adaptive", 90, 500), row("spark", 95, 50), row("oracle", 80, 10)])
    edge = [s.policy for s in frontier(ranked)]
    # late: hadoop is faster and wastes less; a tie on both (hadoop, spark) beats neither;
    # the oracle is a reference, not a choice
    assert edge == ["adaptive", "hadoop", "spark", "none"]


def test_beats_needs_one_figure_strictly_better():
    a, b = Standing("a", 10, 5, 1), Standing("b", 10, 6, 1)
    assert a.beats(b) and not b.beats(a) and not a.beats(a)


def test_seeds_are_averaged_per_policy():
    ranked = standings([row("none", 100, 0, 0), row("none", 110, 0, 1),
                        row("hadoop", 90, 10, 0), row("hadoop", 100, 30, 1)])
    assert [(s.policy, s.mean, s.waste, s.seeds) for s in ranked] == [
        ("none", 105, 0, 2), ("hadoop", 95, 20, 2)]
    assert "means over 2 seeds" in standings_lines(
        [row("none", 100, 0, 0), row("none", 110, 0, 1),
         row("hadoop", 90, 10, 0), row("hadoop", 100, 30, 1)])[0]


def test_lines_name_the_fastest_and_say_when_nothing_is_gained():
    gains = standings_lines([row("none", 100, 0), row("hadoop", 98.9, 40)])
    assert gains[0].endswith("lowest mean job time: hadoop, 98.9 s (0.989 x none's, 40 s wasted)")
    assert gains[1] == ("  not beaten on both mean job time and wasted slot time: "
                        "hadoop (98.9 s, 40 s wasted), none (100.0 s, 0 s wasted)")
    assert len(gains) == 2
    flat = standings_lines([row("none", 100, 0), row("hadoop", 99.1, 40)])
    assert len(flat) == 3 and "speculation gains nothing" in flat[2]


def test_no_lines_without_two_policies_an_am_can_run():
    assert standings_lines([row("none", 100, 0), row("oracle", 90, 5)]) == []


def test_simulate_prints_the_standings(capsys):
    assert main(["simulate", "--synthetic", "jobs=4,tasks=20", "--policy",
                 "none,hadoop,oracle"]) == 0
    out = capsys.readouterr().out
    assert "standings (policies an AM can run): lowest mean job time: " in out
    assert "not beaten on both mean job time and wasted slot time: " in out


def test_a_small_lead_on_one_seed_is_said_to_be_possibly_luck():
    close = standings_lines([row("none", 100, 0), row("hadoop", 95, 40), row("late", 95.5, 9)])
    assert close[-1] == ("  hadoop leads late by 0.5% on one seed: a lead this small may be the "
                         "seed's draws (--seed 0-4 compares them seed by seed)")
    clear = standings_lines([row("none", 100, 0), row("hadoop", 95, 40), row("late", 96.5, 9)])
    assert len(clear) == 2
    seeds = [row(p, m + seed, w, seed) for seed in (0, 1)
             for p, m, w in (("none", 100, 0), ("hadoop", 95, 40), ("late", 95.5, 9))]
    assert len(standings_lines(seeds)) == 2  # several seeds: hedge.sim.paired shows the spread
