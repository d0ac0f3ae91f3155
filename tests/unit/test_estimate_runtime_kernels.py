"""hedge.estimate.runtime_kernels.fresh_table equals the numpy code bit for bit: the fresh
ECT and borrowed-rate spread (``fresh_inputs``, per task type), the known and candidate
masks and the speed noise (``speed_noise_arrays`` over the known attempts), on random
tables of one job (maps and reduces, waiting, running, finished and killed attempts, one
or two progress reports, start-up delays or none, previous reports or none)."""

from __future__ import annotations

import numpy as np
import pytest

from hedge.detect.detectors import candidate_mask, fresh_inputs, known_mask
from hedge.estimate.runtime import speed_noise_arrays
from hedge.estimate.runtime_kernels import fresh_table
from hedge.model import AttemptState, AttemptTable, ClusterFacts, JobFacts, Snapshot

_STATES = np.array([AttemptState.WAITING, AttemptState.RUNNING, AttemptState.RUNNING,
                    AttemptState.RUNNING, AttemptState.SUCCEEDED, AttemptState.KILLED])


def _table(rng: np.random.Generator) -> tuple[Snapshot, np.ndarray, np.ndarray]:
    """A random job's table at ``now``, and each attempt's previous report."""
    n = int(rng.choice([1, 2, 3, 4, 7, 20, 130, 400]))
    start = rng.uniform(0, 50, n).round(int(rng.integers(0, 3)))
    startup = rng.choice([0.0, 1.0, 5.0]) * rng.random(n)
    speed = rng.uniform(0.01, 0.1, n)
    sent = start + startup + rng.uniform(0, 40, n)
    fpt = np.minimum(start + startup + rng.uniform(0, 3, n), sent)
    fp = np.clip((fpt - start - startup) * speed, 1e-3, 1.0)
    progress = np.clip(fp + (sent - fpt) * speed * rng.uniform(0.7, 1.3, n), 0, 1.0)
    progress[rng.random(n) < 0.2] = 1.0
    one_report = rng.random(n) < 0.3
    progress[one_report], sent[one_report] = fp[one_report], fpt[one_report]
    none = rng.random(n) < 0.15  # no progress report yet
    fpt[none], fp[none], progress[none] = np.nan, np.nan, 0.0
    sent[none & (rng.random(n) < 0.5)] = np.nan
    state = rng.choice(_STATES, n)
    prev_sent = np.where(rng.random(n) < 0.7, sent - rng.uniform(0, 6, n), np.nan)
    prev_progress = np.where(np.isfinite(prev_sent),
                             np.clip(progress - rng.uniform(0, 0.2, n), 0, 1), np.nan)
    a = AttemptTable(
        task=np.arange(n), attempt=np.arange(n),
        task_type=(rng.random(n) < rng.choice([0.0, 0.3])).astype(np.int8),
        state=state, node=np.arange(n), start=start, first_progress_time=fpt,
        first_progress=fp, progress=progress, report_sent=sent,
        report_received=sent + 0.1, bytes_processed=np.zeros(n),
        input_bytes=np.full(n, np.nan), speculative=np.zeros(n, dtype=bool))
    job = JobFacts("j", start=0.0, n_maps=n, n_reduces=0)
    now = float(np.nanmax(np.append(sent, 0.0)) + 1.0)
    return Snapshot(now, job, a, ClusterFacts(total_slots=0, free_slots=0)), prev_progress, \
        prev_sent


def _bits(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(x, dtype=np.float64).tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_fresh_table_equals_the_numpy_estimates(seed: int) -> None:
    rng = np.random.default_rng(seed)
    borrowed = evidence = 0
    for _ in range(300):
        s, prev_progress, prev_sent = _table(rng)
        a = s.attempts
        ect, spread, known, cand, noise, ok, running = fresh_table(
            a.task_type, a.state, a.start, a.progress, a.report_sent, a.first_progress_time,
            a.first_progress, prev_progress, prev_sent)
        assert ok and running == int(a.running.sum())
        want_ect, want_known, want_cand, want_spread = fresh_inputs(s)
        assert _bits(ect) == _bits(want_ect) and _bits(spread) == _bits(want_spread)
        np.testing.assert_array_equal(known, want_known)
        np.testing.assert_array_equal(known, known_mask(s))
        np.testing.assert_array_equal(cand, candidate_mask(s))
        want = speed_noise_arrays(a.start, a.progress, a.report_sent, a.first_progress_time,
                                  a.first_progress, prev_progress, prev_sent, want_known)[0]
        assert _bits(np.float64(noise)) == _bits(want)
        borrowed += int((spread > 0).any())
        evidence += int(np.isfinite(noise))
    assert borrowed > 20 and evidence > 100  # the borrowed rates and the noise were tested
