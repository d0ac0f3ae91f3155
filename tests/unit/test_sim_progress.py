"""The simulator's progress line: run k of n, tasks and jobs done, the simulated clock, and
no time-remaining estimate (a rate-based ETA swung from seconds to hours within a run)."""

from __future__ import annotations

from hedge.sim.progress import RunProgress


def test_progress_line_says_what_is_known_and_no_eta(capsys):
    bar = RunProgress("[2/4] late", tasks=10, jobs=3, enabled=True, delay=0)
    bar.update(5, 2, 1234.4)
    bar.update(5, 3, 2000.0)  # no task finished: not redrawn
    bar.close()
    err = capsys.readouterr().err
    assert "[2/4] late: 5/10 tasks, 2/3 jobs, simulated 1,234 s [00:00]" in err
    assert "3/3 jobs" not in err
    for eta in ("<", "remaining", "it/s", "task/s", "?"):
        assert eta not in err


def test_disabled_progress_prints_nothing(capsys):
    bar = RunProgress("x", tasks=10, jobs=3, enabled=False, delay=0)
    bar.update(10, 3, 5.0)
    bar.close()
    assert capsys.readouterr().err == ""
