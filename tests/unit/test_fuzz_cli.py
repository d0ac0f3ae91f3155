"""Bad-input suite, command-line options (issue 20): each option of a cheap command given
odd values (nan, inf, -1, 1e308, huge integers, empty, wrong type, malformed lists) must
end in exit 0 with output, or exit 2 with one line naming the option or the value; a
failed run leaves its --json/--out/-o output absent. See tests/fuzz_support.py."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_support import BAD_TEXT, FUZZ, judge, run_cli

# A run small enough to finish in well under a second whatever the fuzzed option says.
SIMULATE = ["simulate", "--synthetic", "jobs=2,tasks=3", "--policy", "none", "--quiet",
            "--cluster", "nodes=4,slots=2"]
CLUSTER_KEYS = ["nodes", "slots", "heterogeneity", "contention", "hw", "latency", "scan",
                "tick", "startup", "bandwidth", "shuffle", "degraded", "degrade_factor",
                "degrade_period", "degrade_gap", "straggler_ratio", "slowdown", "scheduler",
                "power", "bogus"]
SPEC_KEYS = ["jobs", "tasks", "reduces", "dist", "mean", "straggler_ratio", "slowdown",
             "rate", "bogus"]
SMALL = ["1", "2", "3", "0.5", "1.5", "4", "2:5", "1:1", "pareto:1.5", "lognormal:0.5",
         "uniform", "constant", "fifo", "fair", "const:0.1", "uniform:0.1:0.2", "exp:0.1"]


def value() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(BAD_TEXT), st.sampled_from(SMALL),
                     st.floats().map(repr), st.integers(-(10**30), 10**30).map(str),
                     st.text(max_size=6))


def pairs(keys: list[str]) -> st.SearchStrategy[str]:
    """``key=value,...`` with one to three pairs, sometimes malformed."""
    pair = st.one_of(st.tuples(st.sampled_from(keys), value()).map("=".join),
                     st.sampled_from(["", "=", "nodes", "=1", ",,", "nodes==1"]))
    return st.lists(pair, min_size=1, max_size=3).map(",".join)


def seeds_text() -> st.SearchStrategy[str]:
    number = st.one_of(st.integers(-3, 5).map(str), st.sampled_from(BAD_TEXT))
    return st.one_of(number, st.tuples(number, number).map("-".join),
                     st.lists(number, min_size=1, max_size=3).map(",".join))


# (command line before the option, option, strategy of its value, what an error names)
OPTIONS = [
    (SIMULATE[:-2], "--cluster", pairs(CLUSTER_KEYS), ["--cluster", "cluster"]),
    (["simulate", "--policy", "none", "--quiet", "--cluster", "nodes=4,slots=2"],
     "--synthetic", pairs(SPEC_KEYS), ["--synthetic", "synthetic"]),
    (SIMULATE, "--seed", seeds_text(), ["--seed"]),
    (SIMULATE[:3] + SIMULATE[5:], "--policy",
     st.one_of(st.sampled_from(["none", "none,", ",", "all,none", "hadoop"]), value()),
     ["--policy"]),
    (SIMULATE, "--deadline", value(), ["--deadline"]),
    (SIMULATE, "--deadline-factor", value(), ["--deadline-factor"]),
    (SIMULATE, "--blacklist", st.one_of(value(), st.sampled_from(["1@0-10", "3@5-1", "9"])),
     ["--blacklist", "blacklist"]),
    (SIMULATE, "--workers", value(), ["--workers"]),
    (["plan", "chronos", "--tasks", "10", "--tmin", "1", "--beta", "1.5"], "--deadline",
     value(), ["--deadline"]),
    (["plan", "chronos", "--tasks", "10", "--tmin", "1", "--deadline", "20"], "--beta",
     value(), ["--beta"]),
    (["plan", "chronos", "--tmin", "1", "--beta", "1.5", "--deadline", "20"], "--tasks",
     value(), ["--tasks"]),
    (["traces", "stats", "TRACE"], "--threshold", value(), ["--threshold"]),
]


@pytest.fixture(scope="module")
def small_trace() -> Path:
    path = Path(tempfile.mkdtemp(prefix="hedge-fuzz-")) / "small.tr"
    path.write_text("0 3 5.0 4.0 5.0 9.0\n10 2 5.0 5.0 5.0\n")
    return path


@pytest.mark.parametrize("prefix, option, values, names",
                         OPTIONS, ids=[f"{p[0]}-{o}" for p, o, _, _ in OPTIONS])
def test_option_values(prefix, option, values, names, small_trace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="hedge-fuzz-"))
    out = folder / "out.json"
    prefix = [str(small_trace) if p == "TRACE" else p for p in prefix]
    writes = prefix[0] == "simulate"

    @settings(FUZZ, max_examples=25)
    @given(text=values)
    def run(text):
        out.unlink(missing_ok=True)
        argv = [*prefix, f"{option}={text}", *(["--json", str(out)] if writes else [])]
        outcome = run_cli(argv, [out])
        problem = judge(outcome, [*names, repr(text), text] if text.strip() else names)
        assert problem is None, f"{argv}: {problem}"
        if writes and outcome.code == 0:
            assert out.is_file(), f"{argv}: exit 0 without its --json file"

    run()
